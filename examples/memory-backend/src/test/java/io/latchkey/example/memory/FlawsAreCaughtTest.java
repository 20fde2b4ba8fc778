package io.latchkey.example.memory;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedMethod;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;

import java.util.List;
import org.assertj.core.api.Condition;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Each contract test that used to pass whatever the backend did fails against the flaw it is meant
 * to catch, and passes against the honest backend.
 *
 * <p>The flawed contracts are static nested classes: surefire's default excludes ({@code **}{@code /*$*})
 * keep them out of the normal run, and JUnit discovers only {@code @Nested} inner classes of a test
 * class, so they run only from here, one test at a time, through the JUnit Platform's test kit.
 */
class FlawsAreCaughtTest {

    private static final String LOCK_CONTRACT = "io.latchkey.testkit.LockContract$";
    private static final String FAIR_CONTRACT = "io.latchkey.testkit.FairOrderingContract$";
    private static final String SEMAPHORE_CONTRACT = "io.latchkey.testkit.SemaphoreContract$";

    @Test
    @DisplayName("a backend that reports a TTL longer than the server keeps fails the network-cut test")
    void lateLoss() {
        // Not the pause test: a resumed holder may read the server's close of its session before it
        // checks its lease, and that honest loss path hides the flaw there half the time.
        assertCaught(LateLoss.class, LOCK_CONTRACT + "LossSignal", "cutHolderLosesLeaseBeforeAnotherIsGranted");
    }

    @Test
    @DisplayName("a backend that never reports renewals fails the live-holder test, its loss firing at lease - margin")
    void unrenewed() {
        assertCaught(Unrenewed.class, LOCK_CONTRACT + "LossSignal", "lostDoesNotCompleteForLiveHolder");
    }

    @Test
    @DisplayName("a backend whose cancelled waiter stays queued fails the asynchronous cancellation test")
    void abandonedWaiter() {
        assertCaught(AbandonedWaiter.class, LOCK_CONTRACT + "AsyncAcquisition", "cancelledAsyncLeavesNothingHeld");
    }

    @Test
    @DisplayName("a server that grants the newest waiter fails the fair-ordering test")
    void outOfOrder() {
        assertCaught(OutOfOrder.class, FAIR_CONTRACT + "FairOrdering", "waitersAreGrantedInArrivalOrder");
    }

    @Test
    @DisplayName("a server that never cleans up, and one whose cleanup resets tokens, fail the cleanup test")
    void cleanup() {
        assertCaught(NoCleanup.class, LOCK_CONTRACT + "FencingTokens", "tokensIncreaseAfterCleanup");
        assertCaught(TokenReset.class, LOCK_CONTRACT + "FencingTokens", "tokensIncreaseAfterCleanup");
    }

    @Test
    @DisplayName("a server that grants N + 1 permits fails the semaphore's N+1-th-waits test and its many-contenders history check")
    void extraPermit() {
        assertCaught(ExtraPermit.class, SEMAPHORE_CONTRACT + "AtMostN", "nPlusOneWaitsAndGetsTheReleasedSlot",
                MemorySemaphoreContractTest.class);
        assertCaught(ExtraPermit.class, SEMAPHORE_CONTRACT + "AtMostN", "neverMoreThanNValidLeases",
                MemorySemaphoreContractTest.class);
    }

    @Test
    @DisplayName("a backend that reports a TTL longer than the server keeps fails the semaphore's network-cut test")
    void lateLossOfAPermit() {
        assertCaught(LateLossSemaphores.class, SEMAPHORE_CONTRACT + "LossSignal", "cutHolderLosesPermitBeforeItIsGrantedAgain",
                MemorySemaphoreContractTest.class);
    }

    /**
     * Runs one test of a contract group against {@code flawed}: it fails on one of its checks (an
     * assertion, or a wait that timed out), not on a setup error; against the honest backend: it passes.
     */
    private static void assertCaught(Class<?> flawed, String group, String test) {
        assertCaught(flawed, group, test, MemoryLockContractTest.class);
    }

    /** As above, with {@code honest} the contract run against the honest backend. */
    private static void assertCaught(Class<?> flawed, String group, String test, Class<?> honest) {
        Events events = run(flawed, group, test);
        events.assertStatistics(s -> s.started(1).failed(1));
        events.failed().assertThatEvents().haveExactly(1, finishedWithFailure(new Condition<>(
                t -> t instanceof AssertionError || t instanceof ConditionTimeoutException, "a failed check")));
        run(honest, group, test).assertStatistics(s -> s.started(1).succeeded(1));
    }

    private static Events run(Class<?> contract, String group, String test) {
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectNestedMethod(List.of(contract.getName()), group, test))
                .execute().testEvents();
    }

    static class LateLoss extends MemoryContract {
        LateLoss() {
            super(Flaw.LATE_LOSS);
        }
    }

    static class Unrenewed extends MemoryContract {
        Unrenewed() {
            super(Flaw.UNRENEWED);
        }
    }

    static class AbandonedWaiter extends MemoryContract {
        AbandonedWaiter() {
            super(Flaw.ABANDONED_WAITER);
        }
    }

    static class OutOfOrder extends MemoryContract {
        OutOfOrder() {
            super(Flaw.OUT_OF_ORDER);
        }
    }

    static class NoCleanup extends MemoryContract {
        NoCleanup() {
            super(Flaw.NO_CLEANUP);
        }
    }

    static class ExtraPermit extends MemorySemaphores {
        ExtraPermit() {
            super(Flaw.EXTRA_PERMIT);
        }
    }

    static class LateLossSemaphores extends MemorySemaphores {
        LateLossSemaphores() {
            super(Flaw.LATE_LOSS);
        }
    }

    static class TokenReset extends MemoryContract {
        TokenReset() {
            super(Flaw.TOKEN_RESET);
        }
    }
}
