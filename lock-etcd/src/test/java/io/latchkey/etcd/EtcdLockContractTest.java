package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.testkit.FairOrderingContract;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The whole contract, fair ordering included, against the etcd member {@link EtcdLockTest} uses too. */
class EtcdLockContractTest extends FairOrderingContract<EtcdServer> {

    EtcdLockContractTest() {
        super(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    }

    @Override
    protected boolean isLibraryThread(Thread thread) {
        // jetcd's pool, the Vert.x event loops it runs on and gRPC's Netty threads all serve the client the
        // library created; gRPC shares its Netty and executor threads in the process and ends them once
        // its last channel closes
        String name = thread.getName();
        return super.isLibraryThread(thread) || name.startsWith("jetcd-") || name.startsWith("vert.x-")
                || name.startsWith("vertx-") || name.startsWith("grpc-");
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        assertNoKeyLeft(server(), lockNames);
    }

    /** No key under the prefix of any of {@code lockNames} remains on {@code server}. */
    static void assertNoKeyLeft(EtcdServer server, Collection<String> lockNames) {
        assertNoKeyLeft(server, lockNames, List.of(name -> EtcdLockBackend.prefix(EtcdLockProvider.DEFAULT_NAMESPACE, name)));
    }

    /** No key under any of the {@code prefixes} of any of {@code names} remains on {@code server}. */
    static void assertNoKeyLeft(EtcdServer server, Collection<String> names, List<Function<String, String>> prefixes) {
        try (Client etcd = Client.builder().endpoints(server.endpoints().stream()
                .map(e -> URI.create("http://" + e.getHostString() + ":" + e.getPort())).collect(Collectors.toList()))
                .build()) {
            for (String name : names) {
                for (Function<String, String> prefixOf : prefixes) {
                    String prefix = prefixOf.apply(name);
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
