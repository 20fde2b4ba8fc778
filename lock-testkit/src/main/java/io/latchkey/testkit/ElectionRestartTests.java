package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The election across a restart of the server: never two leaders with a valid term, each term above
 * the last, and a leader again once the server serves. It restarts the server, so it runs alone.
 */
abstract class ElectionRestartTests extends ElectionGroup {

    @Test
    @DisplayName("server restart while a candidate leads and two stand by: never two valid terms at once, each"
            + " term above the last, and one leader again that keeps its term for a lease")
    void restartWhileLeading() throws Exception {
        String name = name();
        History history = new History();
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            candidates.add(campaign(client(), name, "candidate" + i, history));
        }
        Candidate first = awaitLeader(candidates, null, patientWait());

        restartServer(history, name);
        long servingAt = History.now();
        // the leader keeps its term if the backend kept its lock, else another wins the next one
        Thread.sleep(lease().toMillis());
        Candidate after = awaitLeader(candidates, null, failoverBound().multipliedBy(2));
        int termsBefore = after.terms.size();
        Thread.sleep(lease().toMillis());

        assertThat(leaders(candidates)).as("leaders a lease after one led again (the first leader: %s)", first.actor)
                .containsExactly(after);
        assertThat(after.terms).as("terms of %s during that lease", after.actor).hasSize(termsBefore);
        List<Long> terms = candidates.stream().flatMap(c -> c.terms.stream()).sorted(Comparator.comparingLong(t -> t[0]))
                .map(t -> t[1]).toList();
        assertThat(terms).as("terms in the order they were won, the restart %s ms after the first",
                (servingAt - first.electedAt) / 1_000_000).isSorted().doesNotHaveDuplicates();
        HistoryChecker.assertConsistent(history);
    }
}
