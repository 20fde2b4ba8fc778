package io.latchkey.testkit.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.testcontainers.containers.Network;
import org.testcontainers.images.builder.Transferable;

/**
 * One Kafka broker with authentication, authorization and TLS, for security tests: a
 * {@code SASL_PLAINTEXT} and a {@code SASL_SSL} listener, each offering {@code PLAIN},
 * {@code SCRAM-SHA-256} and {@code SCRAM-SHA-512}, and the {@code StandardAuthorizer} (no ACL, no
 * access) with {@value #ADMIN} as super user.
 *
 * <p>The PLAIN users are listed in the broker's JAAS settings; the SCRAM credentials of the same
 * users (same passwords) are created by whoever starts the server, with the admin API, once it runs.
 * The broker's TLS certificate is self-signed for {@code localhost} and {@code 127.0.0.1}, generated
 * at start with the JDK's {@code keytool}; {@link #caCertificate()} is that certificate in PEM, for a
 * client's truststore. The internal listeners (between broker and controller, on the container
 * network only) are plain text, whose principal {@code ANONYMOUS} is therefore a super user too.
 * Not thread-safe; close it at the end.
 */
public final class KafkaSecureServer implements AutoCloseable {

    /** The super user. */
    public static final String ADMIN = "admin";

    private static final String STORE_PASSWORD = "latchkey-test";

    private final Network network = Network.newNetwork();
    private final Path dir;
    private final Map<String, String> users;
    private final KafkaNode node;
    private final int saslPort;
    private final int saslSslPort;

    private KafkaSecureServer(Map<String, String> users) {
        this.users = new LinkedHashMap<>(users);
        try {
            dir = Files.createTempDirectory("latchkey-kafka-tls");
            keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                    "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-keystore",
                    dir.resolve("broker.p12").toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD);
            keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", dir.resolve("broker.p12").toString(),
                    "-storepass", STORE_PASSWORD, "-file", dir.resolve("ca.pem").toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder plainUsers = new StringBuilder();
        this.users.forEach((u, p) -> plainUsers.append(" user_").append(u).append("=\"").append(p).append('"'));
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("offsets.topic.replication.factor", "1");
        settings.put("transaction.state.log.replication.factor", "1");
        settings.put("transaction.state.log.min.isr", "1");
        settings.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        settings.put("super.users", "User:" + ADMIN + ";User:ANONYMOUS");
        settings.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512");
        for (String listener : List.of("sasl", "saslssl")) {
            String prefix = "listener.name." + listener + ".";
            settings.put(prefix + "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512");
            settings.put(prefix + "plain.sasl.jaas.config",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required" + plainUsers + ";");
            settings.put(prefix + "scram-sha-256.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
            settings.put(prefix + "scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        }
        settings.put("ssl.keystore.location", "/opt/kafka/broker.p12");
        settings.put("ssl.keystore.type", "PKCS12");
        settings.put("ssl.keystore.password", STORE_PASSWORD);
        settings.put("ssl.key.password", STORE_PASSWORD);
        settings.put("ssl.client.auth", "none");
        node = new KafkaNode(network, 1, "kafka1", "1@localhost:" + KafkaNode.CONTROLLER_PORT, KafkaServer.clusterId(), settings);
        saslPort = node.addPublishedListener("SASL", "SASL_PLAINTEXT");
        saslSslPort = node.addPublishedListener("SASLSSL", "SASL_SSL");
        try {
            node.withCopyToContainer(Transferable.of(Files.readAllBytes(dir.resolve("broker.p12"))), "/opt/kafka/broker.p12");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Builds the image if needed and starts a broker; returns once it serves.
     *
     * @param users user name to password, for PLAIN; the admin must be among them
     */
    public static KafkaSecureServer start(Map<String, String> users) {
        if (!users.containsKey(ADMIN)) {
            throw new IllegalArgumentException("the users must include the super user '" + ADMIN + "'");
        }
        KafkaSecureServer server = new KafkaSecureServer(users);
        try {
            server.node.start();
            server.node.awaitGroupCoordinators(Duration.ofMinutes(2));
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** {@code localhost:<port>} of the SASL_PLAINTEXT listener. */
    public String saslPlaintextServers() {
        return "localhost:" + node.getMappedPort(saslPort);
    }

    /** {@code localhost:<port>} of the SASL_SSL listener. */
    public String saslSslServers() {
        return "localhost:" + node.getMappedPort(saslSslPort);
    }

    /** The broker's self-signed certificate in PEM: the truststore a TLS client needs. */
    public Path caCertificate() {
        return dir.resolve("ca.pem");
    }

    /**
     * Kafka client settings for the super user over SASL_PLAINTEXT with PLAIN, for an admin client that
     * creates ACLs and SCRAM credentials.
     */
    public Map<String, Object> adminConfig() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("bootstrap.servers", saslPlaintextServers());
        c.put("security.protocol", "SASL_PLAINTEXT");
        c.put("sasl.mechanism", "PLAIN");
        c.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + ADMIN
                + "\" password=\"" + users.get(ADMIN) + "\";");
        return c;
    }

    @Override
    public void close() {
        try {
            node.stop();
        } finally {
            network.close();
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // a temporary folder; the system cleans it
            }
        }
    }

    /**
     * Runs the JDK's keytool. A self-signed certificate generated here, never kept: no key material
     * lives in the repository.
     */
    static void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out;
            try (var in = p.getInputStream()) {
                out = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException("keytool " + String.join(" ", args).replace(STORE_PASSWORD, "****")
                        + " failed: " + out.lines().collect(Collectors.joining(" ")));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running keytool", e);
        }
    }

    /**
     * A self-signed certificate for {@code localhost} that the broker does not use, in PEM, under
     * {@code folder}: a truststore that must make a TLS handshake with the broker fail.
     */
    public static Path unrelatedCertificate(Path folder) {
        try {
            Path store = folder.resolve("other.p12");
            Path pem = folder.resolve("other.pem");
            keytool("-genkeypair", "-alias", "other", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                    "-dname", "CN=localhost", "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass",
                    STORE_PASSWORD);
            keytool("-exportcert", "-rfc", "-alias", "other", "-keystore", store.toString(), "-storepass",
                    STORE_PASSWORD, "-file", pem.toString());
            return pem;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
