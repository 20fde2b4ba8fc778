package io.latchkey.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Histories of read-write grants the checker must pass, and those it must fail, on a synthetic clock. */
class ModeHistoryCheckerTest {

    private static final String NAME = "table:dim";

    private final History history = new History();

    @Test
    void readersTogetherThenAWriterAlonePass() {
        History.Grant a = history.acquiredMode("a", NAME, false, 1, 0, 10);
        History.Grant b = history.acquiredMode("b", NAME, false, 2, 0, 12);
        a.valid(20);
        b.valid(22);
        a.released(30);
        b.released(31);
        History.Grant w = history.acquiredMode("w", NAME, true, 3, 25, 40);
        w.valid(45);
        History.Grant c = history.acquiredMode("c", NAME, false, 4, 50, 60);
        c.valid(61);

        assertThat(HistoryChecker.modeViolations(history)).isEmpty();
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    void aWriterBesideAReaderOrAWriterFails() {
        history.acquiredMode("r", NAME, false, 1, 0, 10).valid(50);
        history.acquiredMode("w", NAME, true, 2, 0, 20).valid(30);
        assertThat(HistoryChecker.modeViolations(history)).singleElement().asString()
                .contains("a write and another lease of 'table:dim' valid at once");

        History two = new History();
        two.acquiredMode("w1", NAME, true, 1, 0, 10).valid(50);
        two.acquiredMode("w2", NAME, true, 2, 0, 20).valid(30);
        assertThatThrownBy(() -> HistoryChecker.assertModesRespected(two)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("valid at once");
    }

    @Test
    void tokensIncreaseAcrossModesButNotAmongReaders() {
        // a read requested after another read was granted may carry a lower token: readers are not ordered
        history.acquiredMode("a", NAME, false, 5, 0, 10).valid(15);
        history.acquiredMode("b", NAME, false, 4, 12, 20).valid(25);
        assertThat(HistoryChecker.modeViolations(history)).isEmpty();
        // a write requested after a read was granted must carry a higher token
        history.acquiredMode("w", NAME, true, 3, 30, 40).valid(45);
        assertThat(HistoryChecker.modeViolations(history)).anySatisfy(v -> assertThat(v)
                .contains("token did not increase across modes: write grant #3"));
    }
}
