package io.latchkey.etcd;

import io.latchkey.testkit.LinearizableFailoverContract;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.etcd.EtcdServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A three-member etcd cluster loses its Raft leader while a lock is held and contenders wait. */
class EtcdClusterFailoverTest extends LinearizableFailoverContract {

    private static EtcdServer cluster;

    @BeforeAll
    static void start() {
        cluster = EtcdServer.startCluster(3);
    }

    @AfterAll
    static void stop() {
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
        cluster.stopMember(cluster.leaderIndex());
    }

    /** Followers notice after one election timeout; a randomized election takes up to another two. */
    @Override
    protected Duration failoverTime() {
        return EtcdServer.ELECTION_TIMEOUT.multipliedBy(3);
    }
}
