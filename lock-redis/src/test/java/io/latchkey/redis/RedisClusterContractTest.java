package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.redis.RedisCluster;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.StringJoiner;

/**
 * The whole contract against a Redis Cluster of three primaries with one replica each, through
 * {@code redis-cluster://} URIs; the cluster is the one {@link RedisClusterTest} uses too.
 */
class RedisClusterContractTest extends LockContract<RedisCluster> {

    /** The key the cluster's test classes share their cluster under. */
    static final String CLUSTER_KEY = "redis-cluster";

    RedisClusterContractTest() {
        super(CLUSTER_KEY, RedisCluster::start);
    }

    /**
     * Cluster clients follow the nodes' announced addresses: a proxy in front of every node, and the
     * {@code natMap} option sends the client to the proxy of every node it learns of.
     */
    @Override
    protected CuttableClient newCuttableClient() {
        List<TcpProxy> proxies = new ArrayList<>();
        try {
            List<InetSocketAddress> seeds = new ArrayList<>();
            StringJoiner natMap = new StringJoiner(",");
            for (InetSocketAddress node : server().endpoints()) {
                TcpProxy proxy = TcpProxy.start(node);
                proxies.add(proxy);
                seeds.add(proxy.endpoint());
                natMap.add(node.getHostString() + ":" + node.getPort() + "=" + proxy.endpoint().getHostString() + ":"
                        + proxy.endpoint().getPort());
            }
            LockClient client = LockClient.connect(URI.create(server().uri(seeds)),
                    options().toBuilder().backendOption(RedisConfigs.NAT_MAP, natMap.toString()).build());
            return CuttableClient.throughProxies(client, proxies);
        } catch (RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            throw e;
        }
    }

    /** Redisson's event loop and timer threads are the library's too. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("redisson-");
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        for (String name : lockNames) {
            String key = RedisKeys.lockKey(RedisLockBackend.DEFAULT_NAMESPACE + ":", name, true);
            assertThat(server().cliFollowing("EXISTS", key)).as("lock key of '%s' after close", name).isEqualTo("0");
        }
    }
}
