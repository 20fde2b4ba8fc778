package io.latchkey.memory;

/** A second provider of the {@code memory} scheme, to test the error for several providers. */
public class OtherMemoryProvider extends InMemoryProvider {
}
