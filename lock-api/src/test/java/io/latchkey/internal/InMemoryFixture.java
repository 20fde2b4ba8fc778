package io.latchkey.internal;

import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.latchkey.memory.InMemoryBackend;
import io.latchkey.memory.InMemoryServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;

/**
 * The set-up of the tests of the shared layer on the in-memory backend: one {@link InMemoryServer}
 * per test, clients each on a backend of their own with the short times below, and a pool for the
 * test's threads; every client is closed and the pool stopped after the test.
 */
abstract class InMemoryFixture {

    static final Duration LEASE = Duration.ofMillis(1200);
    static final Duration MARGIN = Duration.ofMillis(200);
    static final Duration TIMEOUT = Duration.ofMillis(500);
    static final LockOptions OPTIONS = LockOptions.builder().lease(LEASE).safetyMargin(MARGIN).timeout(TIMEOUT).build();

    final InMemoryServer server = new InMemoryServer();
    final List<SharedLockClient> clients = new ArrayList<>();
    final List<InMemoryBackend> backends = new ArrayList<>();
    final ExecutorService threads = Executors.newCachedThreadPool();

    /** A client with {@link #OPTIONS} on a backend of its own. */
    SharedLockClient newClient() {
        return newClient(OPTIONS);
    }

    /** A client with {@code options} on a backend of its own (lease and timeout as {@link #LEASE}, {@link #TIMEOUT}). */
    SharedLockClient newClient(LockOptions options) {
        InMemoryBackend backend = new InMemoryBackend(server, LEASE, TIMEOUT, options);
        SharedLockClient client = new SharedLockClient("memory", backend, options);
        backends.add(backend);
        clients.add(client);
        return client;
    }

    /**
     * A backend on this test's server that offers locks only, as a third-party backend might: no
     * semaphores, and no read-write locks for the reason {@code why}.
     */
    LockBackend locksOnlyBackend(String why) {
        InMemoryBackend memory = new InMemoryBackend(server, LEASE, TIMEOUT);
        return new LockBackend() {
            @Override
            public String describe(String lockName) {
                return memory.describe(lockName);
            }

            @Override
            public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
                return memory.acquire(lockName, deadline, evidence);
            }

            @Override
            public String whyNoReadWriteLocks() {
                return why;
            }

            @Override
            public void close() {
                memory.close();
            }
        };
    }

    @AfterEach
    void closeAll() {
        clients.forEach(SharedLockClient::close);
        threads.shutdownNow();
    }
}
