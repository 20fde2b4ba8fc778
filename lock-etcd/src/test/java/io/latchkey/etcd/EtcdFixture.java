package io.latchkey.etcd;

import io.etcd.jetcd.Client;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What this module's tests that look into etcd share, as a JUnit extension registered once per class: the
 * member of the module's tests ({@link SharedServer} under {@link EtcdLockTest#SERVER_KEY}) and a raw
 * jetcd client of the class's own, to look at what the backend left there.
 */
final class EtcdFixture implements BeforeAllCallback, AfterAllCallback {

    private final SharedServer<EtcdServer> shared = SharedServer.of(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    private volatile EtcdServer server;
    private volatile Client raw;

    @Override
    public void beforeAll(ExtensionContext context) {
        shared.beforeAll(context);
        server = shared.get();
        raw = Client.builder().endpoints(server.endpoints().stream()
                .map(e -> URI.create("http://" + e.getHostString() + ":" + e.getPort())).toList()).build();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (raw != null) {
            raw.close();
        }
    }

    EtcdServer server() {
        return server;
    }

    /** A jetcd client of no credentials on the member. */
    Client raw() {
        return raw;
    }
}
