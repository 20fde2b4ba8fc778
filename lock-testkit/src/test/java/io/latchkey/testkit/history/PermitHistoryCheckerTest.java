package io.latchkey.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Histories of semaphore permits the checker must pass, and those it must fail, on a synthetic clock. */
class PermitHistoryCheckerTest {

    private static final String SEMAPHORE = "spark:warehouse";

    private final History history = new History();

    @Test
    void nHoldersAtOnceOnDistinctSlotsPass() {
        History.Grant a = history.acquiredPermit("a", SEMAPHORE, 0, 1, 0, 10);
        History.Grant b = history.acquiredPermit("b", SEMAPHORE, 1, 2, 0, 12);
        a.valid(20);
        b.valid(22);
        a.released(30);
        History.Grant c = history.acquiredPermit("c", SEMAPHORE, 0, 3, 25, 40);
        c.valid(45);
        b.valid(46);

        assertThat(HistoryChecker.permitViolations(history, 2)).isEmpty();
        HistoryChecker.assertPermitsRespected(history, 2);
    }

    @Test
    void nPlusOneValidLeasesAtOnceFail() {
        history.acquiredPermit("a", SEMAPHORE, 0, 1, 0, 10).valid(50);
        history.acquiredPermit("b", SEMAPHORE, 1, 2, 0, 20).valid(50);
        history.acquiredPermit("c", SEMAPHORE, 2, 3, 0, 30).valid(50);

        assertThat(HistoryChecker.permitViolations(history, 3)).isEmpty();
        assertThat(HistoryChecker.permitViolations(history, 2)).anySatisfy(v -> assertThat(v)
                .contains("3 valid leases of semaphore 'spark:warehouse' of 2 permits at once"))
                .anySatisfy(v -> assertThat(v).contains("slot 2, outside 0..1"));
        assertThatThrownBy(() -> HistoryChecker.assertPermitsRespected(history, 2)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("valid leases of semaphore 'spark:warehouse'");
    }

    @Test
    void twoHoldersOfOneSlotFail() {
        History.Grant a = history.acquiredPermit("a", SEMAPHORE, 1, 1, 0, 10);
        History.Grant b = history.acquiredPermit("b", SEMAPHORE, 1, 2, 5, 20);
        a.valid(30);
        b.valid(35);

        assertThat(HistoryChecker.permitViolations(history, 3)).singleElement().asString()
                .contains("two valid leases of '" + History.permitKey(SEMAPHORE, 1) + "'");
    }

    @Test
    void tokensAreComparedPerSlot() {
        // slot 1's later grant has a lower token than slot 0's earlier one: nothing promises order across slots
        history.acquiredPermit("a", SEMAPHORE, 0, 10, 0, 10).valid(20);
        history.acquiredPermit("b", SEMAPHORE, 1, 3, 30, 40).valid(50);
        assertThat(HistoryChecker.permitViolations(history, 2)).isEmpty();

        // within one slot a token that went backwards is caught
        History.Grant c = history.acquiredPermit("c", SEMAPHORE, 0, 4, 60, 70);
        c.valid(80);
        assertThat(HistoryChecker.permitViolations(history, 2)).anySatisfy(v -> assertThat(v)
                .contains("token did not increase with grant order"));
    }

    @Test
    void theResourceIsFencedPerSlot() {
        FencedPermits resource = new FencedPermits(SEMAPHORE);
        History.Grant a = history.acquiredPermit("a", SEMAPHORE, 0, 5, 0, 10);
        History.Grant b = history.acquiredPermit("b", SEMAPHORE, 1, 6, 0, 20);
        a.valid(21);
        assertThat(resource.write(b)).isTrue();
        assertThat(resource.write(a)).as("a valid holder of another slot with a lower token").isTrue();
        History.Grant c = history.acquiredPermit("c", SEMAPHORE, 0, 7, 30, 40);
        c.valid(41);
        assertThat(resource.write(c)).isTrue();
        assertThat(resource.write(a)).as("the superseded holder of slot 0").isFalse();
        assertThat(resource.acceptedWrites()).isEqualTo(3);
    }
}
