package io.latchkey.shedlock;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.etcd.EtcdServer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's provider suite on etcd, one server for the class. The lease is 3s, not 2s: etcd's TTLs are
 * whole seconds and it expires a lease up to half a second late, so 2s would leave a TTL below its minimum.
 *
 * <p>Two of ShedLock's tests are replaced by what Latchkey promises on etcd, for one reason: Latchkey hands
 * {@code lockAtLeastFor} to an etcd lease, so that it holds even if the process exits, and etcd leases count
 * whole seconds. {@code lockAtLeastFor} is rounded up to the next second, and etcd ends the lease up to half a
 * second after its TTL.
 */
@DisplayName("ShedLock's provider suite on etcd")
class LatchkeyEtcdLockProviderTest extends ShedLockProviderContract {

    @RegisterExtension
    static final SharedServer<EtcdServer> ETCD = SharedServer.of("etcd", EtcdServer::start);

    /**
     * ShedLock's test with a second more to wait after {@code lockAtLeastFor}, not 100 ms: the lock is still
     * held right after the unlock and free once the bound, rounded up to whole seconds, and etcd's lateness
     * passed.
     */
    @Test
    @Override
    public void shouldLockAtLeastFor() throws InterruptedException {
        doTestShouldLockAtLeastFor(1000);
    }

    /**
     * ShedLock's fuzz tester with fewer grants: its {@code lockAtLeastFor} of 5 ms is a one-second etcd lease
     * here, so its 710 grants would take twelve minutes; 17 grants still race eight threads for two names.
     */
    @Test
    @Override
    public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
        fuzzWithFewerGrants();
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(3);
    }

    @Override
    String uri() {
        return ETCD.get().uri(ETCD.get().endpoints()) + "?lease=3s&timeout=1s";
    }
}
