package io.latchkey.etcd;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.etcd.EtcdServer;

/** The whole election contract against the etcd member {@link EtcdLockContractTest} uses. */
class EtcdElectionContractTest extends ElectionContract<EtcdServer> {

    EtcdElectionContractTest() {
        super(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    }
}
