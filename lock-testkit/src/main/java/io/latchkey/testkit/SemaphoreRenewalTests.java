package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedSemaphore;
import io.latchkey.SemaphoreLease;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rule 6 for semaphores: a live holder keeps its permit, valid and counted, far past the lease. */
abstract class SemaphoreRenewalTests extends SemaphoreGroup {

    @Test
    @DisplayName("two live holders keep both permits of two, valid and with their tokens, for three times the lease")
    void liveHoldersKeepTheirPermitsPastLease() throws Exception {
        String name = name();
        DistributedSemaphore semaphore = client().semaphore(name, 2);
        SemaphoreLease one = hold(semaphore);
        SemaphoreLease two = hold(client().semaphore(name, 2));
        DistributedSemaphore contender = client().semaphore(name, 2);
        long tokenOne = one.fencingToken();
        long tokenTwo = two.fencingToken();
        long end = System.nanoTime() + lease().multipliedBy(RenewalTests.LEASES_HELD).toNanos();
        long nextContention = System.nanoTime();
        Duration poll = options().safetyMargin().dividedBy(2);

        while (System.nanoTime() - end < 0) {
            assertThat(one.isValid() && two.isValid()).as("both holders' leases").isTrue();
            assertThat(one.remaining()).isPositive().isLessThanOrEqualTo(lease());
            if (System.nanoTime() - nextContention >= 0) {
                assertThat(contender.tryAcquire()).as("a third permit of two while both holders live").isEmpty();
                nextContention = System.nanoTime() + lease().dividedBy(2).toNanos();
            }
            Thread.sleep(Math.max(1, poll.toMillis())); // the pace of observation, not a synchronisation
        }

        assertThat(one.fencingToken()).isEqualTo(tokenOne);
        assertThat(two.fencingToken()).isEqualTo(tokenTwo);
        assertThat(one.lost().toCompletableFuture()).as("lost() of a renewed permit").isNotDone();
        assertThat(two.lost().toCompletableFuture()).as("lost() of a renewed permit").isNotDone();
        int freed = one.slot();
        one.close();
        SemaphoreLease next = track(contender.tryAcquire(tryBound(Duration.ZERO)).orElseThrow(
                () -> new AssertionError("no permit after a holder closed")));
        assertThat(next.slot()).isEqualTo(freed);
    }
}
