package io.latchkey.etcd;

import io.latchkey.testkit.MultiLockContract;
import io.latchkey.testkit.etcd.EtcdServer;
import java.util.Collection;

/** The whole multi-lock contract against the etcd member {@link EtcdLockContractTest} uses. */
class EtcdMultiLockContractTest extends MultiLockContract<EtcdServer> {

    EtcdMultiLockContractTest() {
        super(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    }

    /** As for a single lock: no key under any name's prefix remains. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        EtcdLockContractTest.assertNoKeyLeft(server(), lockNames);
    }
}
