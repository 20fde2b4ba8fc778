package io.latchkey.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The demo's checker on recorded histories: a lease ends at the earliest of {@code lost()}, its release
 * and the latest deadline its library claimed, never at its holder's next look.
 */
@DisplayName("the demo's checker")
class HistoryTest {

    private static final long MS = 1_000_000L;
    private final History history = new History();

    private void add(String worker, String kind, long atMs, long token, long value) {
        history.add(new Event(worker, kind, atMs * MS, token, value));
    }

    /** The shape seen after the demo's network cut: the loss signalled, the next grant, and only then the holder's look. */
    private void lossSignalledBetweenChecks() {
        add("worker-2", "GRANT", 10_000, 162, (10_000 + 2_400) * MS);
        add("worker-2", "VALID", 10_250, 162, (10_250 + 2_400) * MS);
        add("worker-2", "VALID", 10_500, 162, (10_500 + 2_400) * MS);
        add("worker-2", "LOSS", 10_550, 162, 0);
        add("worker-5", "GRANT", 10_600, 164, (10_600 + 2_400) * MS);
        add("worker-2", "LOST", 10_750, 162, 0);
        add("worker-2", "CLOSED", 10_750, 162, 10_750 * MS);
    }

    @Test
    @DisplayName("ends a lease when lost() completed, not at its holder's next check")
    void lostEndsTheLease() {
        lossSignalledBetweenChecks();

        assertThat(history.overlaps()).isEmpty();
        History.Interval first = history.leases().get(0);
        assertThat(first.end()).isEqualTo(10_550 * MS);
        assertThat(first.endedBy()).isEqualTo(History.End.LOST);
    }

    @Test
    @DisplayName("reports a loss with no fault active and nobody else holding as spurious, apart from overlaps")
    void spuriousLoss() {
        lossSignalledBetweenChecks();

        assertThat(history.spuriousLosses()).extracting(History.Interval::token).containsExactly(162L);
    }

    @Test
    @DisplayName("does not call a loss during a fault, or a paused victim's loss on waking, spurious")
    void lossDuringAFault() {
        lossSignalledBetweenChecks();
        history.fault("network cut", null, 10_500 * MS, 10_560 * MS);
        add("worker-3", "GRANT", 20_000, 170, (20_000 + 2_400) * MS);
        add("worker-3", "LOSS", 25_000, 170, 1);
        history.fault("SIGSTOP", "worker-3", 20_500 * MS, 24_900 * MS);

        assertThat(history.spuriousLosses()).isEmpty();
    }

    @Test
    @DisplayName("still finds an overlap when the next grant comes before the loss is signalled")
    void grantBeforeTheLoss() {
        add("worker-4", "GRANT", 10_000, 90, (10_000 + 2_400) * MS);
        add("worker-5", "GRANT", 10_300, 92, (10_300 + 2_400) * MS);
        add("worker-4", "LOSS", 10_410, 90, 0);

        assertThat(history.overlaps()).hasSize(1);
    }

    @Test
    @DisplayName("still finds an overlap when a holder was granted while another's claimed deadline had not passed")
    void grantWithinAClaimedDeadline() {
        add("worker-1", "GRANT", 10_000, 30, (10_000 + 2_400) * MS);
        add("worker-1", "VALID", 11_000, 30, (11_000 + 2_400) * MS);
        add("worker-2", "GRANT", 13_000, 37, (13_000 + 2_400) * MS);
        add("worker-1", "LOST", 14_000, 30, 0);

        assertThat(history.overlaps()).hasSize(1);
        assertThat(history.leases().get(0).endedBy()).isEqualTo(History.End.DEADLINE);
    }

    @Test
    @DisplayName("ends a lease at its release")
    void release() {
        add("worker-1", "GRANT", 10_000, 30, (10_000 + 2_400) * MS);
        add("worker-1", "RELEASE", 11_000, 30, 11_000 * MS);
        add("worker-2", "GRANT", 11_010, 37, (11_010 + 2_400) * MS);

        assertThat(history.overlaps()).isEmpty();
        assertThat(history.leases().get(0).endedBy()).isEqualTo(History.End.RELEASE);
        assertThat(history.spuriousLosses()).isEmpty();
    }
}
