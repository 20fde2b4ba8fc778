package io.latchkey.spring.integration;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.etcd.EtcdServer;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RegistryContract} on etcd, on the module's shared server. */
class LatchkeyRegistryEtcdTest extends RegistryContract {

    @RegisterExtension
    static final SharedServer<EtcdServer> SERVER = SharedServer.of("etcd", EtcdServer::start);

    @Override
    String uri() {
        return SERVER.get().uri(SERVER.get().endpoints()) + "?lease=3s&timeout=1s";
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(3);
    }
}
