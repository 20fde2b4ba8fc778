package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rule 6: a live holder keeps the lock for as long as it runs, far past {@code lease}. */
abstract class RenewalTests extends ContractGroup {

    /** How many leases the holder keeps the lock for. */
    static final int LEASES_HELD = 3;

    @Test
    @DisplayName("a live holder keeps the lock, valid and exclusive, for three times the lease")
    void liveHolderKeepsLockPastLease() throws Exception {
        String name = name();
        Lease held = hold(client().lock(name));
        DistributedLock contender = client().lock(name);
        long token = held.fencingToken();
        long end = System.nanoTime() + lease().multipliedBy(LEASES_HELD).toNanos();
        long nextContention = System.nanoTime();
        Duration poll = options().safetyMargin().dividedBy(2);

        while (System.nanoTime() - end < 0) {
            assertThat(held.isValid()).as("the holder's lease").isTrue();
            assertThat(held.remaining()).isPositive().isLessThanOrEqualTo(lease());
            if (System.nanoTime() - nextContention >= 0) {
                assertThat(contender.tryLock()).as("another client's tryLock while the holder lives").isEmpty();
                nextContention = System.nanoTime() + lease().dividedBy(2).toNanos();
            }
            Thread.sleep(Math.max(1, poll.toMillis())); // the pace of observation, not a synchronisation
        }

        assertThat(held.fencingToken()).isEqualTo(token);
        assertThat(held.lost().toCompletableFuture()).as("lost() of a renewed lease").isNotDone();
        held.close();
        assertThat(contender.tryLock(tryBound(Duration.ZERO))).as("the lock after the holder closed").isPresent()
                .get().satisfies(l -> track(l));
    }
}
