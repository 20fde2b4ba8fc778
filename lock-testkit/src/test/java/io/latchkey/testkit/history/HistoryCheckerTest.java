package io.latchkey.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Histories the checker must pass, and histories it must fail, built on a synthetic clock. */
class HistoryCheckerTest {

    private static final String LOCK = "job:nightly";

    private final History history = new History();

    @Test
    void sequentialGrantsWithIncreasingTokensPass() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        a.valid(20);
        a.released(30);
        History.Grant b = history.acquired("b", LOCK, 2, 25, 40);
        b.valid(50);
        b.released(60);

        assertThat(HistoryChecker.violations(history.events())).isEmpty();
        HistoryChecker.assertConsistent(history);
    }

    @Test
    void overlappingValidSpansFail() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        History.Grant b = history.acquired("b", LOCK, 2, 5, 40);
        a.valid(45); // a was still seen valid after b's grant returned
        b.valid(50);

        assertThat(HistoryChecker.violations(history.events()))
                .singleElement().asString().contains("two valid leases").contains("grant #1").contains("grant #2");
        assertThatThrownBy(() -> HistoryChecker.assertConsistent(history)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("two valid leases of 'job:nightly'");
    }

    @Test
    void overlapIsFoundBehindALongerSpan() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        a.valid(100);
        History.Grant b = history.acquired("b", LOCK, 2, 0, 20);
        b.valid(30);
        History.Grant c = history.acquired("c", LOCK, 3, 0, 60);
        c.valid(70);

        assertThat(HistoryChecker.violations(history.events())).hasSize(2)
                .allSatisfy(v -> assertThat(v).contains("grant #1 to a"));
    }

    @Test
    void spansTouchingAtOneInstantFail() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        a.valid(40);
        History.Grant b = history.acquired("b", LOCK, 2, 15, 40);
        b.valid(41);

        assertThat(HistoryChecker.violations(history.events())).singleElement().asString().contains("two valid leases");
    }

    @Test
    void grantsOfDifferentLocksMayOverlap() {
        history.acquired("a", LOCK, 1, 0, 10).valid(50);
        history.acquired("b", "other", 1, 0, 20).valid(60);

        assertThat(HistoryChecker.violations(history.events())).isEmpty();
    }

    @Test
    void grantNeverCheckedAfterItsReturnCannotOverlap() {
        history.acquired("a", LOCK, 1, 0, 10);
        History.Grant b = history.acquired("b", LOCK, 2, 20, 30);
        b.valid(40);

        assertThat(HistoryChecker.violations(history.events())).isEmpty();
    }

    @Test
    void validAgainAfterInvalidFails() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        a.invalid(20);
        a.valid(30);

        assertThat(HistoryChecker.violations(history.events())).singleElement().asString()
                .contains("seen valid again");
    }

    @Test
    void tokenNotIncreasingWithGrantOrderFails() {
        History.Grant a = history.acquired("a", LOCK, 7, 0, 10);
        a.valid(15);
        a.released(20);
        History.Grant b = history.acquired("b", LOCK, 7, 25, 30);
        b.valid(35);

        assertThat(HistoryChecker.violations(history.events())).singleElement().asString()
                .contains("token did not increase").contains("grant #2");
    }

    @Test
    void lowerTokenLaterFails() {
        history.acquired("a", LOCK, 9, 0, 10).released(20);
        history.acquired("b", LOCK, 3, 25, 30).released(40);

        assertThat(HistoryChecker.violations(history.events())).singleElement().asString()
                .contains("token did not increase");
    }

    @Test
    void concurrentRequestsMayBeGrantedInEitherTokenOrder() {
        // b was requested before a's grant returned: nothing orders them but the overlap check
        History.Grant a = history.acquired("a", LOCK, 2, 0, 10);
        a.valid(12);
        a.released(14);
        History.Grant b = history.acquired("b", LOCK, 1, 5, 20);
        b.valid(22);

        assertThat(HistoryChecker.violations(history.events())).isEmpty();
    }

    @Test
    void fencedResourceRejectsStaleWriteAndHistoryPasses() {
        FencedResource resource = new FencedResource(LOCK);
        History.Grant a = history.acquired("a", LOCK, 1, 0, History.now());
        assertThat(resource.write(a)).isTrue();
        History.Grant b = history.acquired("b", LOCK, 2, History.now(), History.now());

        assertThat(resource.write(b)).isTrue();
        assertThat(resource.write(a)).as("a stale write").isFalse();
        assertThat(resource.write(b)).as("the current holder writes again").isTrue();

        assertThat(resource.highestToken()).isEqualTo(2);
        assertThat(resource.acceptedWrites()).isEqualTo(3);
        assertThat(HistoryChecker.violations(history.events())).isEmpty();
    }

    @Test
    void acceptedStaleWriteFails() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        History.Grant b = history.acquired("b", LOCK, 2, 15, 20);
        b.wrote(true, 30);
        a.wrote(true, 40); // a broken resource accepted it

        assertThat(HistoryChecker.violations(history.events())).anySatisfy(v -> assertThat(v)
                .contains("accepted a stale write").contains("token 1").contains("token 2"));
    }

    @Test
    void writeOfSupersededHolderAcceptedFails() {
        // the token went backwards in a failover: the old holder's writes keep being accepted
        History.Grant a = history.acquired("a", LOCK, 10, 0, 10);
        a.wrote(true, 20);
        History.Grant b = history.acquired("b", LOCK, 3, 30, 40);
        b.wrote(false, 45);
        a.wrote(true, 50);

        assertThat(HistoryChecker.violations(history.events())).anySatisfy(v -> assertThat(v)
                .contains("superseded holder").contains("grant #1").contains("grant #2"));
    }

    @Test
    void writeOfHolderBeforeALaterGrantPasses() {
        History.Grant a = history.acquired("a", LOCK, 1, 0, 10);
        a.wrote(true, 20);
        History.Grant b = history.acquired("b", LOCK, 2, 15, 30);
        b.wrote(true, 40);

        assertThat(HistoryChecker.violations(history.events())).isEmpty();
    }

    @Test
    void availabilityWithinBoundPasses() {
        history.fault("kill", LOCK, 100);
        history.acquired("b", LOCK, 2, 50, 100 + Duration.ofSeconds(1).toNanos());

        HistoryChecker.assertAvailableWithin(history, LOCK, 100, Duration.ofSeconds(2));
    }

    @Test
    void availabilityTooLateFails() {
        history.fault("kill", LOCK, 100);
        history.acquired("b", LOCK, 2, 50, 100 + Duration.ofSeconds(3).toNanos());

        assertThatThrownBy(() -> HistoryChecker.assertAvailableWithin(history, LOCK, 100, Duration.ofSeconds(2)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("later than the bound of 2000 ms");
    }

    @Test
    void neverAvailableAgainFails() {
        history.acquired("a", LOCK, 1, 0, 10);
        history.fault("kill", LOCK, 100);

        assertThatThrownBy(() -> HistoryChecker.assertAvailableWithin(history, LOCK, 100, Duration.ofSeconds(2)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("never granted after the fault");
    }

    @Test
    void describeShowsTheEvents() {
        history.acquired("a", LOCK, 1, 0, 10).valid(20);

        List<Event> events = history.events();

        assertThat(HistoryChecker.describe(events)).contains("ACQUIRED").contains("VALID").contains("job:nightly");
    }
}
