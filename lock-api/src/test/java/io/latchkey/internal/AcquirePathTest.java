package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import io.latchkey.SemaphoreLease;
import io.latchkey.memory.InMemoryBackend;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The one acquire path, the same for a lock and a permit: its refusals, its messages and its events. */
class AcquirePathTest extends InMemoryFixture {

    /** The bound every wait for an event gets: far above any configured time. */
    static final long BOUND_MS = LEASE.plus(TIMEOUT).multipliedBy(5).toMillis();

    /**
     * The in-memory backend as seen through a slow network: its confirmations may be reported as sent
     * {@code roundTrip} earlier (an acquire that took that long), and {@code onGrant} runs as a grant
     * returns.
     */
    static final class SlowNetwork implements SemaphoreBackend {
        final InMemoryBackend memory;
        volatile Duration roundTrip = Duration.ZERO;
        volatile Runnable onGrant = () -> { };

        SlowNetwork(InMemoryBackend memory) {
            this.memory = memory;
        }

        private LeaseEvidence late(LeaseEvidence evidence) {
            long back = roundTrip.toNanos();
            return new LeaseEvidence() {
                @Override
                public void confirmed(long sentAtNanos, Duration serverTtl) {
                    evidence.confirmed(sentAtNanos - back, serverTtl);
                }

                @Override
                public void lost(String reason, Throwable cause) {
                    evidence.lost(reason, cause);
                }
            };
        }

        private <L> L granted(L lease) {
            if (lease != null) {
                onGrant.run();
            }
            return lease;
        }

        @Override
        public String describe(String lockName) {
            return memory.describe(lockName);
        }

        @Override
        public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
            return granted(memory.acquire(lockName, deadline, late(evidence)));
        }

        @Override
        public String describeSemaphore(String name) {
            return memory.describeSemaphore(name);
        }

        @Override
        public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
                throws InterruptedException {
            return granted(memory.acquirePermit(name, permits, deadline, late(evidence)));
        }

        @Override
        public void close() {
            memory.close();
        }
    }

    /** Records the events of every kind, as the client sends them. */
    static final class TargetRecorder implements LockListener {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();

        @Override
        public void acquired(Target target, Duration waitTime, long fencingToken) {
            events.add("acquired " + target + " token=" + fencingToken);
        }

        @Override
        public void notAcquired(Target target, Duration waitTime) {
            events.add("notAcquired " + target);
        }

        @Override
        public void acquireFailed(Target target, Duration waitTime, LockException exception) {
            events.add("acquireFailed " + target);
        }

        @Override
        public void released(Target target, Duration holdTime) {
            events.add("released " + target);
        }

        @Override
        public void lost(Target target, LockLostException reason) {
            events.add("lost " + target + ": " + reason.getMessage());
        }

        @Override
        public void backendUnavailable(Target target, LockBackendUnavailableException exception) {
            events.add("backendUnavailable " + target);
        }

        String next() throws InterruptedException {
            String e = events.poll(BOUND_MS, TimeUnit.MILLISECONDS);
            assertThat(e).as("an event within %d ms", BOUND_MS).isNotNull();
            return e;
        }
    }

    SlowNetwork slow;

    SharedLockClient slowClient() {
        slow = new SlowNetwork(new InMemoryBackend(server, LEASE, TIMEOUT));
        SharedLockClient client = new SharedLockClient("memory", slow, OPTIONS);
        clients.add(client);
        return client;
    }

    @Test
    @DisplayName("a grant whose validity ended before it returned is released and refused, for a lock and a permit alike")
    void validityEndedBeforeReturn() throws Exception {
        SharedLockClient client = slowClient();
        slow.roundTrip = LEASE; // the acquire took a whole lease: the deadline, lease minus margin, passed during it
        assertThatThrownBy(() -> client.lock("job").tryLock(Duration.ofSeconds(1))).isInstanceOf(LockException.class)
                .hasMessageContaining("lock 'job' (memory key 'job') was granted, but its validity ended before the grant returned")
                .hasMessageContaining("raise the lease option");
        assertThatThrownBy(() -> client.semaphore("pool", 2).tryAcquire(Duration.ofSeconds(1))).isInstanceOf(LockException.class)
                .hasMessageContaining("a permit of semaphore 'pool' (memory semaphore 'pool') was granted, but its validity"
                        + " ended before the grant returned")
                .hasMessageContaining("raise the lease option");
        assertThat(server.isHeld("job")).as("the refused lock, released").isFalse();
        assertThat(server.heldPermits("pool")).as("the refused permit, released").isZero();
        assertThat(client.trackedNames()).isZero();
        assertThat(client.trackedSemaphores()).isZero();

        slow.roundTrip = Duration.ZERO;
        try (Lease lock = client.lock("job").lock(Duration.ofSeconds(1));
                SemaphoreLease permit = client.semaphore("pool", 2).acquire(Duration.ofSeconds(1))) {
            assertThat(lock.isValid()).isTrue();
            assertThat(permit.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("a grant made while its client closed is released, and the call says so, for a lock and a permit alike")
    void grantedWhileClosing() {
        SharedLockClient locks = slowClient();
        slow.onGrant = locks::close;
        assertThatThrownBy(() -> locks.lock("job").tryLock(Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class)
                .hasMessage("lock client for memory was closed while lock 'job' was being acquired; the lock was released");
        SharedLockClient permits = slowClient();
        slow.onGrant = permits::close;
        assertThatThrownBy(() -> permits.semaphore("pool", 2).tryAcquire(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("lock client for memory was closed while a permit of semaphore 'pool' was being acquired;"
                        + " the permit was released");
        assertThat(server.isHeld("job")).isFalse();
        assertThat(server.heldPermits("pool")).isZero();
        assertThat(locks.trackedNames()).isZero();
        assertThat(permits.trackedSemaphores()).isZero();
    }

    @Test
    @DisplayName("a permit's acquired, notAcquired, lost and released reach listeners by target; listeners by name hear locks only")
    void permitEvents() throws Exception {
        TargetRecorder targets = new TargetRecorder();
        ScheduledJobsTest.Recorder byName = new ScheduledJobsTest.Recorder();
        SharedLockClient client = newClient(OPTIONS.toBuilder().listener(targets).listener(byName).build());
        SemaphoreLease lease = client.semaphore("pool", 1).acquire(Duration.ofSeconds(1));
        assertThat(targets.next()).isEqualTo("acquired permit 0 of semaphore 'pool' token=" + lease.fencingToken());
        assertThat(client.semaphore("pool", 1).tryAcquire()).isEmpty();
        assertThat(targets.next()).isEqualTo("notAcquired a permit of semaphore 'pool'");
        backends.get(0).signalPermitLoss("pool", "session expired");
        assertThat(targets.next()).startsWith("lost permit 0 of semaphore 'pool': ").contains("session expired");
        lease.close();
        assertThat(targets.next()).isEqualTo("released permit 0 of semaphore 'pool'");

        try (Lease lock = client.lock("pool").lock(Duration.ofSeconds(1))) {
            assertThat(targets.next()).isEqualTo("acquired lock 'pool' token=" + lock.fencingToken());
            // events arrive in order: the lock's is the first this listener heard
            assertThat(byName.next()).isEqualTo("acquired pool token=" + lock.fencingToken());
        }
        assertThat(targets.next()).isEqualTo("released lock 'pool'");
        assertThat(byName.next()).isEqualTo("released pool");
    }

    @Test
    @DisplayName("an unreachable backend is acquireFailed and backendUnavailable for a permit as for a lock")
    void unreachablePermit() throws Exception {
        TargetRecorder targets = new TargetRecorder();
        SharedLockClient client = newClient();
        client.addListener(targets);
        backends.get(0).reachable.set(false);
        assertThatThrownBy(() -> client.semaphore("pool", 2).tryAcquire()).isInstanceOf(LockBackendUnavailableException.class);
        assertThat(targets.next()).isEqualTo("acquireFailed a permit of semaphore 'pool'");
        assertThat(targets.next()).isEqualTo("backendUnavailable a permit of semaphore 'pool'");
        assertThatThrownBy(() -> client.lock("job").tryLock()).isInstanceOf(LockBackendUnavailableException.class);
        assertThat(targets.next()).isEqualTo("acquireFailed lock 'job'");
        assertThat(targets.next()).isEqualTo("backendUnavailable lock 'job'");
    }
}
