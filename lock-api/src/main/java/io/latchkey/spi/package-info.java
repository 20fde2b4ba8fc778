/**
 * What a backend implements: {@link io.latchkey.spi.LockProviderFactory} (found with
 * {@link java.util.ServiceLoader}), {@link io.latchkey.spi.LockBackend} and
 * {@link io.latchkey.spi.BackendLease}. The shared layer builds reentrancy, local gating, validity
 * deadlines and loss signalling on top, the same for every backend.
 */
package io.latchkey.spi;
