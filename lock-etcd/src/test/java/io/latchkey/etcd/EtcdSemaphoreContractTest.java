package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** The whole semaphore contract, on the etcd member {@link EtcdLockContractTest} and {@link EtcdLockTest} use. */
class EtcdSemaphoreContractTest extends SemaphoreContract<EtcdServer> {

    EtcdSemaphoreContractTest() {
        super(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    }

    @Override
    protected boolean isLibraryThread(Thread thread) {
        // as in EtcdLockContractTest: jetcd's pool, its Vert.x event loops and gRPC's Netty threads
        String name = thread.getName();
        return super.isLibraryThread(thread) || name.startsWith("jetcd-") || name.startsWith("vert.x-")
                || name.startsWith("vertx-") || name.startsWith("grpc-");
    }

    /** No slot key of the semaphores, and no lock key of their names, is left; there is no counter to keep. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        try (Client etcd = Client.builder().endpoints(server().endpoints().stream()
                .map(e -> URI.create("http://" + e.getHostString() + ":" + e.getPort())).collect(Collectors.toList()))
                .build()) {
            for (String name : semaphoreNames) {
                for (String prefix : new String[] {
                        EtcdLockBackend.semaphorePrefix(EtcdLockProvider.DEFAULT_NAMESPACE, name),
                        EtcdLockBackend.prefix(EtcdLockProvider.DEFAULT_NAMESPACE, name)}) {
                    assertThat(etcd.getKVClient().get(ByteSequence.from(prefix, StandardCharsets.UTF_8),
                            GetOption.builder().isPrefix(true).withCountOnly(true).build()).get(10, TimeUnit.SECONDS)
                            .getCount()).as("keys left under %s", prefix).isZero();
                }
            }
        } catch (Exception e) {
            throw new AssertionError("could not read etcd to check for leftover keys: " + e, e);
        }
    }
}
