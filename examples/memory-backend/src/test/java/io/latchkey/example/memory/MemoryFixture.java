package io.latchkey.example.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import java.time.Duration;
import java.util.Collection;
import java.util.function.Supplier;

/**
 * What {@link MemoryContract} and {@link MemorySemaphores} share, as the two contracts have different
 * bases: the memory server with a given {@link Flaw}, the options, and rule 10's check of the server.
 */
final class MemoryFixture {

    private MemoryFixture() {
    }

    /** Starts a memory server with {@code flaw}. */
    static Supplier<MemoryServerProcess> server(Flaw flaw) {
        return () -> MemoryServerProcess.start(flaw);
    }

    /** A local server answers at once: a shorter lease and timeout keep the suite quick. */
    static LockOptions options(Flaw flaw) {
        return LockOptions.builder().lease(Duration.ofSeconds(4)).timeout(Duration.ofSeconds(2))
                .backendOption("flaw", flaw.optionValue()).build();
    }

    /** Fails unless {@code server} keeps no state for any of {@code names}, each a {@code kind} ("lock", "semaphore"). */
    static void assertNoStateLeft(MemoryServerProcess server, Collection<String> names, String kind) {
        for (String name : names) {
            assertThat(server.hasState(MemoryLockBackend.key("latchkey", name))).as("server state of %s '%s'", kind, name)
                    .isFalse();
        }
    }
}
