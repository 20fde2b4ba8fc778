package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 8: every grant's token is strictly greater than that of every earlier holder of the lock name,
 * across clients, client restarts and the backend's own cleanup.
 */
abstract class FencingTokenTests extends ContractGroup {

    @Test
    @DisplayName("tokens strictly increase over successive grants, alternating between two clients")
    void tokensIncreaseAcrossClients() throws Exception {
        String name = name();
        List<LockClient> clients = List.of(client(), client());
        List<Long> tokens = new ArrayList<>();

        for (int i = 0; i < 6; i++) {
            try (Lease lease = hold(clients.get(i % 2).lock(name))) {
                tokens.add(lease.fencingToken());
            }
        }

        assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
    }

    @Test
    @DisplayName("a client created after another was closed gets a greater token")
    void tokensIncreaseAcrossClientRestart() throws Exception {
        String name = name();
        LockClient first = client();
        long before;
        try (Lease lease = hold(first.lock(name))) {
            before = lease.fencingToken();
        }
        first.close();

        try (Lease lease = hold(client().lock(name))) {
            assertThat(lease.fencingToken()).isGreaterThan(before);
        }
    }

    @Test
    @DisplayName("after the backend cleaned up a released lock, the next grant still gets a greater token")
    void tokensIncreaseAfterCleanup() throws Exception {
        String name = name();
        LockClient client = client();
        long before;
        try (Lease lease = hold(client.lock(name))) {
            before = lease.fencingToken();
        }
        // waits for the cleanup itself: a backend that never removes a free lock's state proves nothing here
        Awaitility.await("the backend's cleanup of the released lock").atMost(patientWait())
                .pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> contract().assertNothingLeftInBackend(List.of(name)));

        try (Lease lease = hold(client().lock(name))) {
            assertThat(lease.fencingToken()).isGreaterThan(before);
        }
    }

    @Test
    @DisplayName("nested leases share their holder's token, and different lock names have their own tokens")
    void nestedLeasesShareTokenAndNamesAreIndependent() throws Exception {
        LockClient client = client();
        String a = name("a");
        Lease outer = hold(client.lock(a));
        Lease inner = track(client.lock(a).tryLock().orElseThrow());
        Lease other = hold(client.lock(name("b")));

        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(other.isValid()).isTrue();
        assertThat(outer.isValid()).isTrue();
    }
}
