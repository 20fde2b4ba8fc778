package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 10: after every lease and the client are closed, no thread, connection or backend state of
 * the library remains. Threads and this JVM's TCP connections to the server (on Linux, from
 * {@code /proc}) are checked here; the backend's own state through
 * {@link LockContract#assertNothingLeftInBackend}.
 */
abstract class NothingLeaksTests extends ContractGroup {

    @Test
    @DisplayName("after the leases and the client are closed, no library thread, no connection and no backend state remains")
    void nothingRemainsAfterClose() throws Exception {
        Set<Thread> before = libraryThreads();
        List<InetSocketAddress> servers = contract().server().endpoints();
        Set<String> connectionsBefore = OwnConnections.to(servers);
        String sync = name("sync");
        String async = name("async");
        String nested = name("nested");
        LockClient client = contract().newClient();
        try {
            Lease a = hold(client.lock(sync));
            Lease b = client.lock(async).tryLockAsync(patientWait()).get().orElseThrow();
            DistributedLock lock = client.lock(nested);
            Lease outer = hold(lock);
            Lease inner = lock.tryLock().orElseThrow();
            inner.close();
            outer.close();
            b.close();
            a.close();
        } finally {
            client.close();
        }

        assertLibraryThreadsEnd(before);
        if (OwnConnections.readable()) {
            Awaitility.await("the client's connections to " + servers + " to close").atMost(tryBound(Duration.ZERO))
                    .pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> assertThat(OwnConnections.to(servers)).as("this JVM's connections to the server"
                            + " that the closed client opened").isSubsetOf(connectionsBefore));
        }
        contract().assertNothingLeftInBackend(List.of(sync, async, nested));
    }

    @Test
    @DisplayName("closing a client that still holds leases releases them, and its leases turn invalid")
    void closingClientReleasesItsLeases() throws Exception {
        String name = name();
        LockClient client = contract().newClient();
        Lease held = hold(client.lock(name));

        client.close();

        assertThat(held.isValid()).isFalse();
        Optional<Lease> next = client().lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(next).as("another client after the holder's client closed").isPresent();
        next.get().close();
    }

    @Test
    @DisplayName("a closed client refuses new locks with IllegalStateException, and closing it again is harmless")
    void closedClientRefusesUse() {
        LockClient client = contract().newClient();
        DistributedLock lock = client.lock(name());
        client.close();

        client.close();
        assertThatThrownBy(() -> client.lock(name())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalStateException.class);
    }
}
