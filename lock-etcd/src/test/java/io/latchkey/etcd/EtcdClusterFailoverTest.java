package io.latchkey.etcd;

import io.latchkey.testkit.LinearizableFailoverContract;
import io.latchkey.testkit.etcd.EtcdServer;
import java.time.Duration;

/** A three-member etcd cluster loses its Raft leader while a lock is held and contenders wait. */
class EtcdClusterFailoverTest extends LinearizableFailoverContract<EtcdServer> {

    EtcdClusterFailoverTest() {
        super(() -> EtcdServer.startCluster(3));
    }

    @Override
    protected void failLeader() {
        cluster().stopMember(cluster().leaderIndex());
    }

    /** Followers notice after one election timeout; a randomized election takes up to another two. */
    @Override
    protected Duration failoverTime() {
        return EtcdServer.ELECTION_TIMEOUT.multipliedBy(3);
    }
}
