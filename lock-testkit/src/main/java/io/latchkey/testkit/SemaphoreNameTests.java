package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.SemaphoreLease;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 9 for semaphores: the names of locks, mapped without collisions between names, and apart from
 * the locks: a semaphore and a lock of one name never take from each other.
 */
abstract class SemaphoreNameTests extends SemaphoreGroup {

    @Test
    @DisplayName("names with ':', '/', spaces and Unicode are semaphores of their own, full for every client while held")
    void awkwardNamesAreDistinctSemaphores() throws Exception {
        String prefix = name("awkward") + ":";
        LockClient holder = client();
        LockClient other = client();
        for (String suffix : LockNameTests.AWKWARD) {
            SemaphoreLease lease = hold(holder.semaphore(prefix + suffix, 1));
            assertThat(lease.lockName()).isEqualTo(prefix + suffix);
        }
        for (String suffix : LockNameTests.AWKWARD) {
            assertThat(other.semaphore(prefix + suffix, 1).tryAcquire()).as("'%s' while every name is held", prefix + suffix)
                    .isEmpty();
        }
        for (String suffix : List.of("a;b", "a=b", "a?b", "a#b", "ab", "a\u00c9", "a\u0435")) {
            Optional<SemaphoreLease> free = other.semaphore(prefix + suffix, 1).tryAcquire(tryBound(Duration.ZERO));
            assertThat(free).as("'%s', never held, next to the held ones", prefix + suffix).isPresent();
            free.get().close();
        }
    }

    @Test
    @DisplayName("a semaphore and a lock of the same name are independent, in both directions")
    void semaphoresLiveApartFromLocks() throws Exception {
        String name = name();
        LockClient a = client();
        LockClient b = client();

        Lease lock = track(a.lock(name).tryLock(tryBound(Duration.ZERO)).orElseThrow());
        Optional<SemaphoreLease> permit = b.semaphore(name, 1).tryAcquire(tryBound(Duration.ZERO));
        assertThat(permit).as("the only permit of semaphore '%s' while lock '%s' is held", name, name).isPresent();
        track(permit.get());
        assertThat(b.lock(name).tryLock()).as("the lock while both are held").isEmpty();
        lock.close();
        Optional<Lease> again = b.lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(again).as("lock '%s' while the semaphore's permit is held", name).isPresent();
        track(again.get());
        assertThat(permit.get().isValid()).isTrue();
    }

    @Test
    @DisplayName("a 255-character name is one semaphore, different from its 254-character prefix; 256 characters,"
            + " an empty name or a control character is an IllegalArgumentException naming the rule")
    void lengthAndCharacters() throws Exception {
        String base = name("long");
        String longest = base + "x".repeat(255 - base.length());
        LockClient client = client();
        hold(client.semaphore(longest, 1));
        assertThat(client().semaphore(longest, 1).tryAcquire()).as("the 255-character name while held").isEmpty();
        assertThat(client().semaphore(longest.substring(0, 254), 1).tryAcquire(tryBound(Duration.ZERO)))
                .as("its 254-character prefix").isPresent().get().satisfies(this::track);

        assertThatThrownBy(() -> client.semaphore("n".repeat(256), 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("255");
        assertThatThrownBy(() -> client.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> client.semaphore("job\u0000x", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control");
    }
}
