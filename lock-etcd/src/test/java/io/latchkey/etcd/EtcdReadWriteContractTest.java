package io.latchkey.etcd;

import io.latchkey.testkit.ReadWriteContract;
import io.latchkey.testkit.etcd.EtcdServer;
import java.util.Collection;
import java.util.List;

/** The whole read-write contract, on the etcd member {@link EtcdLockContractTest} and {@link EtcdLockTest} use. */
class EtcdReadWriteContractTest extends ReadWriteContract<EtcdServer> {

    EtcdReadWriteContractTest() {
        super(EtcdLockTest.SERVER_KEY, EtcdServer::start);
    }

    /** No reader's or writer's key of the names is left, and no lock key of those names either. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        EtcdLockContractTest.assertNoKeyLeft(server(), lockNames, List.of(
                name -> EtcdReadWrite.prefix(EtcdLockProvider.DEFAULT_NAMESPACE, name),
                name -> EtcdLockBackend.prefix(EtcdLockProvider.DEFAULT_NAMESPACE, name)));
    }
}
