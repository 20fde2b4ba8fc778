package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.testkit.fault.CuttableClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 2: {@code tryLock(wait)} returns within {@code wait + timeout + slack}, empty if the lock stays
 * held; an unreachable backend is an exception within the same bound, never a hang, never empty.
 */
abstract class TryWithDeadlineTests extends ContractGroup {

    @Test
    @DisplayName("tryLock() on a free lock grants it")
    void tryLockOnFreeLockGrants() throws Exception {
        Optional<Lease> lease = client().lock(name()).tryLock();

        assertThat(lease).isPresent();
        track(lease.get());
        assertThat(lease.get().isValid()).isTrue();
    }

    @Test
    @DisplayName("tryLock(ZERO) on a held lock returns empty without waiting for the holder")
    void tryLockZeroDoesNotBlockOnHeldLock() throws Exception {
        String name = name();
        hold(client().lock(name));
        DistributedLock contender = client().lock(name);

        Duration took = timed(() -> assertThat(contender.tryLock(Duration.ZERO)).isEmpty());

        assertThat(took).isLessThanOrEqualTo(tryBound(Duration.ZERO));
    }

    @Test
    @DisplayName("tryLock(wait) on a lock that stays held returns empty after the wait, within the bound")
    void tryLockWaitReturnsEmptyWithinBound() throws Exception {
        String name = name();
        hold(client().lock(name));
        DistributedLock contender = client().lock(name);
        Duration wait = slack();

        Duration took = timed(() -> assertThat(contender.tryLock(wait)).isEmpty());

        // a backend counting in milliseconds may give up within one millisecond of the deadline
        assertThat(took).isBetween(wait.minusMillis(1), tryBound(wait));
    }

    @Test
    @DisplayName("tryLock(wait) gets a lock that its holder releases during the wait")
    void tryLockWaitGetsLockReleasedDuringWait() throws Exception {
        String name = name();
        Lease held = hold(client().lock(name));
        DistributedLock contender = client().lock(name);
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Optional<Lease>> result = executor().submit(() -> {
            waiting.countDown();
            return contender.tryLock(patientWait());
        });
        waiting.await();

        long releasedAt = System.nanoTime();
        held.close();
        Optional<Lease> got = await(result, tryBound(patientWait()), "the waiting tryLock");

        assertThat(got).as("lease after the holder released").isPresent();
        track(got.get());
        assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThanOrEqualTo(tryBound(Duration.ZERO));
    }

    @Test
    @DisplayName("a negative wait is an IllegalArgumentException")
    void negativeWaitIsRejected() {
        DistributedLock lock = client().lock(name());

        assertThatThrownBy(() -> lock.tryLock(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.tryLockAsync(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("a client cut off from the server gets an exception within wait + timeout, never empty, never a hang")
    void cutClientFailsWithinBound() throws Exception {
        CuttableClient cut = cuttableClient();
        DistributedLock lock = cut.client().lock(name());
        track(lock.tryLock(patientWait()).orElseThrow()).close(); // the connection works before the cut
        cut.cut();
        Duration wait = slack();

        Future<Optional<Lease>> result = executor().submit(() -> lock.tryLock(wait));

        long start = System.nanoTime();
        assertThatThrownBy(() -> await(result, tryBound(wait), "tryLock on a cut client"))
                .isInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining(lock.name());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThanOrEqualTo(tryBound(wait));
    }

    @Test
    @DisplayName("a client of a closed port fails to connect, or fails tryLock, within the bound, never empty")
    void closedPortFailsWithinBound() throws Exception {
        InetSocketAddress closed = closedPort();
        String uri = contract().server().uri(List.of(closed));
        Duration wait = slack();

        Future<Optional<Lease>> result = executor().submit(() -> {
            LockClient client = track(LockClient.connect(URI.create(uri), options()));
            return client.lock(name()).tryLock(wait);
        });

        long start = System.nanoTime();
        assertThatThrownBy(() -> await(result, tryBound(wait).plus(timeout()), "connect and tryLock on a closed port"))
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(io.latchkey.LockNotAcquiredException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThanOrEqualTo(tryBound(wait).plus(timeout()));
    }

    private static InetSocketAddress closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
    }
}
