package io.latchkey.redis;

import io.latchkey.LockOptions;
import io.latchkey.testkit.ClusterFailoverContract;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.redis.RedisSentinelCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Loss of the primary of a sentinel-managed primary and replica while a lock is held and contenders
 * wait. Replication is asynchronous, so this is the non-linearizable cluster contract: no stale write
 * accepted by the fenced resource, and the lock granted again after the failover.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisSentinelFailoverTest extends ClusterFailoverContract {

    private RedisSentinelCluster cluster;

    @BeforeAll
    void start() {
        cluster = RedisSentinelCluster.start();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected LockServer cluster() {
        return cluster;
    }

    @Override
    protected void failLeader() {
        cluster.killPrimary();
    }

    /** The sentinels notice the silence, then have one failover attempt's time to promote the replica. */
    @Override
    protected Duration failoverTime() {
        return RedisSentinelCluster.DOWN_AFTER.plus(RedisSentinelCluster.FAILOVER_TIMEOUT);
    }

    /** The sentinels report addresses on the containers' network: the client maps them to the published ports. */
    @Override
    protected LockOptions options() {
        return super.options().toBuilder().backendOption(RedisConfigs.NAT_MAP, cluster.natMap()).build();
    }
}
