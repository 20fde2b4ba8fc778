package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** etcd with authentication enabled: a user limited to the lock prefix, a wrong password, a user without rights. */
class EtcdAuthTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static EtcdServer server;

    @BeforeAll
    static void start() {
        server = EtcdServer.startWithAuth();
        // the first client of a JVM loads gRPC, Netty and Vert.x: connect does not charge that start-up to the
        // server, so it connects within the tests' own timeout
        LockClient.connect(URI.create(server.uri(server.endpoints(), EtcdServer.ROOT_USER, EtcdServer.ROOT_PASSWORD)),
                LockOptions.builder().lease(Duration.ofSeconds(5)).timeout(TIMEOUT).namespace(EtcdServer.LOCK_PREFIX)
                        .build()).close();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static LockClient connect(String user, String password, String namespace) {
        LockOptions options = LockOptions.builder().lease(Duration.ofSeconds(5)).timeout(TIMEOUT).namespace(namespace).build();
        return LockClient.connect(URI.create(server.uri(server.endpoints(), user, password)), options);
    }

    @Test
    void aUserLimitedToTheLockPrefixTakesLocksThere() throws Exception {
        try (LockClient a = connect(EtcdServer.LOCK_USER, EtcdServer.LOCK_PASSWORD, EtcdServer.LOCK_PREFIX);
                LockClient b = connect(EtcdServer.LOCK_USER, EtcdServer.LOCK_PASSWORD, EtcdServer.LOCK_PREFIX)) {
            try (Lease lease = a.lock("secured").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
                assertThat(b.lock("secured").tryLock(Duration.ofMillis(200))).isEmpty();
            }
            try (Lease lease = b.lock("secured").tryLock(Duration.ofSeconds(2)).orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    @Test
    void aWrongPasswordFailsFastAsAnAuthenticationError() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> connect(EtcdServer.LOCK_USER, "not-the-password", EtcdServer.LOCK_PREFIX).close())
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("authentication failed")
                .hasMessageContaining(EtcdServer.LOCK_USER)
                .hasMessageContaining("check the user name and password")
                .hasMessageNotContaining("not-the-password");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not a timeout").isLessThan(TIMEOUT);
    }

    @Test
    void aUserWithoutRightsOnThePrefixIsRefused() {
        assertThatThrownBy(() -> connect(EtcdServer.OTHER_USER, EtcdServer.OTHER_PASSWORD, EtcdServer.LOCK_PREFIX).close())
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("permission")
                .hasMessageContaining(EtcdServer.OTHER_USER)
                .hasMessageContaining(EtcdServer.LOCK_PREFIX);
    }

    @Test
    void theLimitedUserIsRefusedOutsideItsPrefix() {
        assertThatThrownBy(() -> connect(EtcdServer.LOCK_USER, EtcdServer.LOCK_PASSWORD, "/elsewhere/").close())
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("permission")
                .hasMessageContaining("/elsewhere/");
    }
}
