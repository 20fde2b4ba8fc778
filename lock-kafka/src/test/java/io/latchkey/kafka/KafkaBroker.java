package io.latchkey.kafka;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What this module's broker-side test classes share, as a JUnit extension registered once per class: the
 * broker of the module's tests ({@link SharedServer} under {@link KafkaLockTest#SERVER_KEY}), an
 * {@link Admin} client of the class's own to look at topics, groups and offsets, and whatever a test
 * opened, closed after it, last opened first.
 *
 * <p>A class's tests run one at a time, so one list of what was opened serves them all.
 */
final class KafkaBroker implements BeforeAllCallback, AfterAllCallback, AfterEachCallback {

    private final SharedServer<KafkaServer> shared = SharedServer.of(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private volatile KafkaServer server;
    private volatile Admin admin;

    @Override
    public void beforeAll(ExtensionContext context) {
        shared.beforeAll(context);
        server = shared.get();
        admin = Admin.create(Map.of("bootstrap.servers", server.bootstrapServers()));
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (AutoCloseable c; (c = opened.pollFirst()) != null; ) {
            c.close();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (admin != null) {
            admin.close();
        }
    }

    KafkaServer server() {
        return server;
    }

    Admin admin() {
        return admin;
    }

    /** {@code c}, closed after the test. */
    <T extends AutoCloseable> T track(T c) {
        opened.addFirst(c);
        return c;
    }

    /** A client on the broker with {@code options} and the Kafka settings {@code extra}; closed after the test. */
    LockClient client(LockOptions options, Properties extra) {
        Properties p = new Properties();
        p.putAll(extra);
        p.put("bootstrap.servers", server.bootstrapServers());
        return track(KafkaLockProvider.newClient(p, options));
    }
}
