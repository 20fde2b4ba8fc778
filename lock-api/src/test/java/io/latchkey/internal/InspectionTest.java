package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Candidacy;
import io.latchkey.DistributedLock;
import io.latchkey.Election;
import io.latchkey.ElectionListener;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.Leadership;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import io.latchkey.Revocation;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link DistributedLock#inspect()} and {@link Election#leader()} on the in-memory backend: the holder
 * identity written with a grant, read by another client.
 */
class InspectionTest extends InMemoryFixture {

    private SharedLockClient clientOf(String owner) {
        return newClient(OPTIONS.toBuilder().owner(owner).build());
    }

    @Test
    @DisplayName("another client reads the holder's owner, client start, thread, token and time left; free before"
            + " and after")
    void anotherClientSeesTheHolder() throws Exception {
        SharedLockClient holder = clientOf("node-a");
        SharedLockClient observer = clientOf("node-b");
        DistributedLock seen = observer.lock("report:nightly");
        assertThat(seen.inspect()).isEqualTo(LockState.free("report:nightly"));

        Instant before = Instant.now();
        Thread.currentThread().setName("inspection-test-main");
        try (Lease lease = holder.lock("report:nightly").lock(Duration.ZERO)) {
            LockState state = seen.inspect();
            assertThat(state.isHeld()).isTrue();
            Holder h = state.holder().orElseThrow();
            assertThat(h.owner()).isEqualTo("node-a");
            assertThat(h.thread()).isEqualTo("inspection-test-main");
            assertThat(h.clientStarted()).isBeforeOrEqualTo(before);
            assertThat(state.token()).hasValue(lease.fencingToken());
            assertThat(state.expiresIn()).hasValueSatisfying(left -> assertThat(left).isPositive()
                    .isLessThanOrEqualTo(LEASE));
            assertThat(state.toString()).contains("owner=node-a", "token " + lease.fencingToken());
        }
        assertThat(seen.inspect().isHeld()).as("after the release").isFalse();
        assertThat(seen.inspect().token()).isEmpty();
        assertThat(seen.inspect().expiresIn()).isEmpty();
    }

    @Test
    @DisplayName("the default owner is <hostname>:<pid> of this process")
    void defaultOwner() throws Exception {
        SharedLockClient client = newClient();
        try (Lease lease = client.lock("x").lock(Duration.ZERO)) {
            Holder h = newClient().lock("x").inspect().holder().orElseThrow();
            assertThat(h.owner()).isEqualTo(OPTIONS.owner()).endsWith(":" + ProcessHandle.current().pid());
        }
    }

    @Test
    @DisplayName("leader() is empty without a leader, names each leader after a hand-over, and is empty after the"
            + " last candidate closed")
    void leaderAfterEveryChange() throws Exception {
        Election observed = clientOf("observer").election("active");
        assertThat(observed.leader()).isEmpty();
        Terms a = new Terms();
        Terms b = new Terms();
        Candidacy first = clientOf("node-a").election("active").campaign(a);
        Leadership aTerm = a.elected.get(PATIENT_SECONDS, TimeUnit.SECONDS);
        Candidacy second = clientOf("node-b").election("active").campaign(b);
        assertThat(observed.leader().map(Holder::owner)).hasValue("node-a");
        assertThat(observed.leader().orElseThrow().thread()).as("the campaign's thread").startsWith("latchkey-election-");
        LockState lock = clientOf("observer").lock("active").inspect();
        assertThat(lock.token()).as("the lock's token is the term").hasValue(aTerm.term());

        first.resign();
        Leadership bTerm = b.elected.get(PATIENT_SECONDS, TimeUnit.SECONDS);
        assertThat(observed.leader().map(Holder::owner)).hasValue("node-b");
        assertThat(clientOf("observer").lock("active").inspect().token()).hasValue(bTerm.term());
        first.close();
        second.close();
        assertThat(observed.leader()).isEmpty();
    }

    @Test
    @DisplayName("an unreachable backend fails inspect within the timeout; a closed client and a read-write mode say"
            + " why they cannot")
    void failures() throws Exception {
        SharedLockClient client = newClient();
        backends.get(0).reachable.set(false);
        long start = System.nanoTime();
        assertThatThrownBy(() -> client.lock("x").inspect()).isInstanceOf(LockBackendUnavailableException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.multipliedBy(3));
        backends.get(0).reachable.set(true);

        assertThatThrownBy(() -> client.readWriteLock("rw").readLock().inspect())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("read-write lock 'rw'");
        try (LockClient locksOnly = new SharedLockClient("memory", locksOnlyBackend("no"), OPTIONS)) {
            assertThatThrownBy(() -> locksOnly.lock("y").inspect())
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("'y' cannot be inspected");
        }
        client.close();
        assertThatThrownBy(() -> client.lock("x").inspect()).isInstanceOf(IllegalStateException.class);
    }

    private static final long PATIENT_SECONDS = LEASE.multipliedBy(10).toSeconds();

    private static final class Terms implements ElectionListener {
        final CompletableFuture<Leadership> elected = new CompletableFuture<>();

        @Override
        public void elected(Leadership leadership) {
            elected.complete(leadership);
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
        }
    }
}
