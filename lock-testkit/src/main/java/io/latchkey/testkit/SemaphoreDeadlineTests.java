package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.CuttableClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 2 for semaphores: not getting a permit is a value, {@code tryAcquire(wait)} returns within
 * {@code wait + timeout}, and an unreachable backend is an exception in the same bound.
 */
abstract class SemaphoreDeadlineTests extends SemaphoreGroup {

    @Test
    @DisplayName("on a full semaphore tryAcquire() is empty at once, tryAcquire(wait) empty after the wait and within"
            + " wait + timeout, acquire(wait) a LockNotAcquiredException naming the semaphore")
    void fullSemaphoreGivesUpWithinBound() throws Exception {
        String name = name();
        DistributedSemaphore holder = client().semaphore(name, 2);
        hold(holder);
        hold(holder);
        DistributedSemaphore other = client().semaphore(name, 2);

        Duration zero = ContractGroup.timed(() -> assertThat(other.tryAcquire()).isEmpty());
        assertThat(zero).as("tryAcquire() on a full semaphore").isLessThanOrEqualTo(tryBound(Duration.ZERO));

        Duration wait = slack();
        Duration waited = ContractGroup.timed(() -> assertThat(other.tryAcquire(wait)).isEmpty());
        // a backend counting in milliseconds may give up within one millisecond of the deadline
        assertThat(waited).as("tryAcquire(%s) on a full semaphore", wait).isBetween(wait.minusMillis(1), tryBound(wait));

        assertThatThrownBy(() -> other.acquire(Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining(name).hasMessageContaining("2 permits");
    }

    @Test
    @DisplayName("a negative wait is an IllegalArgumentException")
    void negativeWaitIsRejected() {
        DistributedSemaphore semaphore = client().semaphore(name(), 2);
        assertThatThrownBy(() -> semaphore.tryAcquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
    }

    @Test
    @DisplayName("a client cut off from the server gets an exception within wait + timeout, never empty, never a hang")
    void cutClientFailsWithinBound() throws Exception {
        CuttableClient cut = cuttableClient();
        DistributedSemaphore semaphore = cut.client().semaphore(name(), 2);
        hold(semaphore).close(); // the connection works before the cut
        cut.cut();
        Duration wait = slack();

        Future<Optional<SemaphoreLease>> result = executor().submit(() -> semaphore.tryAcquire(wait));

        long start = System.nanoTime();
        assertThatThrownBy(() -> await(result, tryBound(wait), "tryAcquire on a cut client"))
                .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining(semaphore.name());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThanOrEqualTo(tryBound(wait));
    }
}
