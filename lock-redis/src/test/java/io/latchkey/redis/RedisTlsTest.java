package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** rediss:// against a server that speaks only TLS, with a certificate from a test authority. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisTlsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private RedisServer server;
    private Path truststore;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        server = RedisServer.withTls();
        truststore = dir.resolve("ca.crt");
        Files.writeString(truststore, server.caCertificatePem(), StandardCharsets.US_ASCII);
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static LockOptions options() {
        return LockOptions.builder().lease(TIMEOUT.multipliedBy(2)).timeout(TIMEOUT).build(); // longer than timeout + margin
    }

    @Test
    void rediss_trusting_the_servers_authority_from_a_pem_file_grants_locks() throws Exception {
        String uri = server.uri(server.endpoints()) + "?sslTruststore=" + truststore.toUri();
        try (LockClient client = LockClient.connect(URI.create(uri), options());
             Lease lease = client.lock("tls").lock(Duration.ZERO)) {
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.fencingToken()).isPositive();
        }
    }

    @Test
    void rediss_with_an_untrusted_certificate_fails_at_once_saying_so() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.connect(URI.create(server.uri(server.endpoints())), options()))
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("TLS handshake failed").hasMessageContaining("sslTruststore");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT);
    }
}
