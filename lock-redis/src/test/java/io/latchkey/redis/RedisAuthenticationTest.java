package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Servers that require credentials: the right ones work, wrong ones fail at once with an error that
 * says authentication failed, well before the timeout would have passed.
 */
class RedisAuthenticationTest {

    /** Long, so that a failure that merely waited for it would show. */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static LockOptions options() {
        return LockOptions.builder().lease(TIMEOUT.multipliedBy(2)).timeout(TIMEOUT).build(); // longer than timeout + margin
    }

    private static void locksWith(String uri) throws InterruptedException {
        try (LockClient client = LockClient.connect(URI.create(uri), options());
             Lease lease = client.lock("auth").lock(Duration.ZERO)) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    private static void failsFast(String uri, String password) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> locksWith(uri))
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("authentication failed")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(password));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT);
    }

    private static String hostPort(RedisServer server) {
        InetSocketAddress a = server.endpoints().get(0);
        return a.getHostString() + ":" + a.getPort();
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class A_server_with_requirepass {
        private RedisServer server;

        @BeforeAll
        void start() {
            server = RedisServer.withPassword("s3cret-pw");
        }

        @AfterAll
        void stop() {
            if (server != null) {
                server.close();
            }
        }

        @Test
        void grants_locks_with_the_right_password() throws Exception {
            locksWith("redis://:s3cret-pw@" + hostPort(server));
        }

        @Test
        void refuses_a_wrong_password_at_once() {
            failsFast("redis://:not-it@" + hostPort(server), "not-it");
        }

        @Test
        void refuses_a_client_without_a_password_at_once() {
            failsFast("redis://" + hostPort(server), "s3cret-pw");
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class A_server_with_an_acl_user {
        private RedisServer server;

        @BeforeAll
        void start() {
            server = RedisServer.withAclUser("locker", "acl-pw");
        }

        @AfterAll
        void stop() {
            if (server != null) {
                server.close();
            }
        }

        @Test
        void grants_locks_to_that_user_with_its_password() throws Exception {
            locksWith("redis://locker:acl-pw@" + hostPort(server));
        }

        @Test
        void grants_locks_with_credentials_given_in_the_options() throws Exception {
            LockOptions options = options().toBuilder().credentials("locker", "acl-pw").build();
            try (LockClient client = LockClient.connect(URI.create("redis://" + hostPort(server)), options);
                 Lease lease = client.lock("auth-options").lock(Duration.ZERO)) {
                assertThat(lease.fencingToken()).isPositive();
            }
        }

        @Test
        void refuses_a_wrong_password_at_once() {
            failsFast("redis://locker:wrong-pw@" + hostPort(server), "wrong-pw");
        }

        @Test
        void refuses_an_unknown_user_at_once() {
            failsFast("redis://nobody:acl-pw@" + hostPort(server), "acl-pw");
        }
    }
}
