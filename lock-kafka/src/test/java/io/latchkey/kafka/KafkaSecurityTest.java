package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.kafka.KafkaSecureServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The URI's credentials and TLS against a broker with SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), TLS
 * and the StandardAuthorizer: the right user locks, a wrong password fails fast saying so, and a user
 * without ACLs is refused with a message naming the permission it lacks. The broker is this class's
 * own, not shared: no other test should meet its authorizer.
 */
class KafkaSecurityTest {

    /** Every ACL a lock needs, on the topics and groups of the default prefix. */
    private static final String ALICE = "alice";
    /** No ACL at all. */
    private static final String BOB = "bob";
    /** Topic ACLs only, none on groups. */
    private static final String CAROL = "carol";
    private static final Map<String, String> USERS = Map.of(KafkaSecureServer.ADMIN, "admin-secret",
            ALICE, "alice-secret", BOB, "bob-secret", CAROL, "carol-secret");
    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6))
            .timeout(Duration.ofSeconds(5)).build();

    private static KafkaSecureServer server;

    @BeforeAll
    static void start() throws Exception {
        server = KafkaSecureServer.start(USERS);
        try (Admin admin = Admin.create(server.adminConfig())) {
            // one credential change per user and request
            for (ScramMechanism m : List.of(ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)) {
                List<UserScramCredentialAlteration> scram = new ArrayList<>();
                USERS.forEach((user, password) ->
                        scram.add(new UserScramCredentialUpsertion(user, new ScramCredentialInfo(m, 4096), password)));
                admin.alterUserScramCredentials(scram).all().get(30, TimeUnit.SECONDS);
            }
            List<AclBinding> acls = new ArrayList<>();
            for (AclOperation op : List.of(AclOperation.CREATE, AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE)) {
                acls.add(allow(ALICE, ResourceType.TOPIC, op));
                acls.add(allow(CAROL, ResourceType.TOPIC, op));
            }
            for (AclOperation op : List.of(AclOperation.READ, AclOperation.DESCRIBE)) {
                acls.add(allow(ALICE, ResourceType.GROUP, op));
            }
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static AclBinding allow(String user, ResourceType type, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, KafkaLockProvider.DEFAULT_PREFIX, PatternType.PREFIXED),
                new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW));
    }

    private static String name(String tag) {
        return "secure:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private static void locksAndReleases(String uri) throws InterruptedException {
        try (LockClient client = LockClient.connect(URI.create(uri), OPTIONS)) {
            String name = name("ok");
            Optional<Lease> lease = client.lock(name).tryLock(OPTIONS.lease());
            assertThat(lease).as("lock '%s' over %s", name, uri.replaceAll(":[^:@/]*@", ":****@")).isPresent();
            try (Lease l = lease.get()) {
                assertThat(l.isValid()).isTrue();
                assertThat(l.fencingToken()).isNotNegative();
            }
            // the next grant, by the same client, is seen by the broker too
            Optional<Lease> again = client.lock(name).tryLock(OPTIONS.lease());
            assertThat(again).isPresent();
            again.get().close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})
    @DisplayName("a user with the lock's ACLs locks over SASL_PLAINTEXT with each mechanism")
    void saslUserWithAclsLocks(String mechanism) throws Exception {
        String query = mechanism.equals("PLAIN") ? "" : "?sasl=" + mechanism;
        locksAndReleases("kafka://" + ALICE + ":" + USERS.get(ALICE) + "@" + server.saslPlaintextServers() + query);
    }

    @Test
    @DisplayName("kafkas:// with the broker's CA in sslTruststore locks over SASL_SSL with SCRAM-SHA-512")
    void tlsWithScramLocks() throws Exception {
        locksAndReleases("kafkas://" + ALICE + ":" + USERS.get(ALICE) + "@" + server.saslSslServers()
                + "?sasl=SCRAM-SHA-512&sslTruststore=" + server.caCertificate());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"PLAIN", "SCRAM-SHA-256"})
    @DisplayName("a wrong password fails at connect, within the timeout, saying authentication failed")
    void wrongPasswordFailsFast(String mechanism) {
        String uri = "kafka://" + ALICE + ":wrong@" + server.saslPlaintextServers() + "?sasl=" + mechanism;
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.connect(URI.create(uri), OPTIONS).close())
                .isInstanceOf(LockException.class)
                .isNotInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining("authentication failed")
                .hasMessageContaining(ALICE)
                .hasMessageNotContaining("wrong");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(OPTIONS.timeout());
    }

    @Test
    @DisplayName("kafkas:// with a truststore that does not hold the broker's CA fails at connect saying the TLS handshake failed")
    void untrustedCertificateFails(@TempDir Path dir) {
        Path other = KafkaSecureServer.unrelatedCertificate(dir);
        String uri = "kafkas://" + ALICE + ":" + USERS.get(ALICE) + "@" + server.saslSslServers() + "?sslTruststore=" + other;
        assertThatThrownBy(() -> LockClient.connect(URI.create(uri), OPTIONS).close())
                .isInstanceOf(LockException.class)
                .hasMessageContaining("TLS handshake failed");
    }

    @Test
    @DisplayName("a user without ACLs is refused, the message naming the topic permission it lacks")
    void userWithoutAclsIsRefused() throws Exception {
        try (LockClient client = LockClient.connect(URI.create("kafka://" + BOB + ":" + USERS.get(BOB) + "@"
                + server.saslPlaintextServers()), OPTIONS)) {
            String name = name("no-acl");
            assertThatThrownBy(() -> client.lock(name).tryLock(OPTIONS.lease()))
                    .isInstanceOf(LockException.class)
                    .isNotInstanceOf(LockBackendUnavailableException.class)
                    .hasMessageContaining(name)
                    .hasMessageContaining("user '" + BOB + "' may not DESCRIBE topic '"
                            + TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name) + "'");
        }
    }

    @Test
    @DisplayName("a user with topic ACLs but none on the group is refused, the message naming group READ")
    void userWithoutGroupAclIsRefused() throws Exception {
        try (LockClient client = LockClient.connect(URI.create("kafka://" + CAROL + ":" + USERS.get(CAROL) + "@"
                + server.saslPlaintextServers() + "?sasl=SCRAM-SHA-512"), OPTIONS)) {
            String name = name("no-group-acl");
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock(name).tryLock(OPTIONS.lease()))
                    .isInstanceOf(LockException.class)
                    .isNotInstanceOf(LockBackendUnavailableException.class)
                    .hasMessageContaining(name)
                    .hasMessageContaining("may not READ group '" + TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name) + "'");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(OPTIONS.lease().plus(OPTIONS.timeout()));
        }
    }
}
