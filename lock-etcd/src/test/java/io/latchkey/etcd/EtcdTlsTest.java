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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** etcds:// against a member that serves clients over TLS only, with a certificate from a CA of its own. */
class EtcdTlsTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(5))
            .timeout(Duration.ofSeconds(3)).build();
    private static EtcdServer server;
    @TempDir
    static Path dir;
    private static Path ca;

    @BeforeAll
    static void start() throws Exception {
        server = EtcdServer.startWithTls();
        ca = Files.writeString(dir.resolve("ca.pem"), server.caCertificatePem(), StandardCharsets.UTF_8);
        // the first client of a JVM loads gRPC, Netty, Vert.x and the TLS stack: connect does not charge that
        // start-up to the server, so it connects within the tests' own timeout
        LockClient.connect(URI.create(server.uri(server.endpoints()) + "?cacert=" + ca), OPTIONS).close();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void locksWorkOverTlsWithTheServersCa() throws Exception {
        String uri = server.uri(server.endpoints()) + "?cacert=" + ca;
        assertThat(uri).startsWith("etcds://");
        try (LockClient a = LockClient.connect(URI.create(uri), OPTIONS);
                LockClient b = LockClient.connect(URI.create(uri), OPTIONS)) {
            try (Lease lease = a.lock("tls").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
                assertThat(b.lock("tls").tryLock(Duration.ZERO)).isEmpty();
            }
        }
    }

    @Test
    void anUntrustedServerCertificateIsATlsErrorNotATimeout() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS).close())
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("TLS handshake")
                .hasMessageContaining("cacert");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(OPTIONS.timeout());
    }

    @Test
    void aCaFileWithoutTlsIsRefused() {
        String plain = server.uri(server.endpoints()).replace("etcds://", "etcd://") + "?cacert=" + ca;
        assertThatThrownBy(() -> LockClient.connect(URI.create(plain), OPTIONS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("etcds://");
    }
}
