package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rule 1: at most one valid lease per lock name at any instant, across threads and clients. */
abstract class MutualExclusionTests extends ContractGroup {

    static final int FUZZ_CLIENTS = 2;
    static final int FUZZ_THREADS_PER_CLIENT = 4;
    static final int FUZZ_ITERATIONS = 200;

    @Test
    @DisplayName("a lock held by one client is not granted to another client")
    void heldLockIsNotGrantedToAnotherClient() throws Exception {
        String name = name();
        Lease held = hold(client().lock(name));

        assertThat(client().lock(name).tryLock()).isEmpty();
        assertThat(held.isValid()).isTrue();
    }

    @Test
    @DisplayName("a lock held by one thread is not granted to another thread of the same client")
    void heldLockIsNotGrantedToAnotherThreadOfTheSameClient() throws Exception {
        LockClient client = client();
        DistributedLock lock = client.lock(name());
        Lease held = hold(lock);

        Future<Boolean> other = executor().submit(() -> lock.tryLock().isPresent());

        assertThat(await(other, tryBound(java.time.Duration.ZERO), "tryLock() on another thread")).isFalse();
        assertThat(held.isValid()).isTrue();
    }

    @Test
    @DisplayName("8 threads in 2 clients each increment a shared counter 200 times under the lock, and none is lost")
    void fuzzedReadModifyWriteLosesNoUpdate() throws Exception {
        String name = name();
        History history = new History();
        FencedResource resource = new FencedResource(name);
        Counter counter = new Counter();
        ExecutorService pool = executor();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int c = 0; c < FUZZ_CLIENTS; c++) {
            DistributedLock lock = track(contract().newClient(contract().fuzzOptions())).lock(name);
            for (int t = 0; t < FUZZ_THREADS_PER_CLIENT; t++) {
                String actor = "client" + c + "-thread" + t;
                workers.add(pool.submit(() -> {
                    start.await();
                    int done = 0;
                    while (done < FUZZ_ITERATIONS) {
                        if (incrementUnderLock(lock, actor, history, resource, counter)) {
                            done++;
                        }
                    }
                    return null;
                }));
            }
        }
        start.countDown();
        int total = FUZZ_CLIENTS * FUZZ_THREADS_PER_CLIENT * FUZZ_ITERATIONS;
        for (Future<?> w : workers) {
            // the bound only turns a deadlock into a failure; the build's test timeout is usually shorter
            await(w, patientWait().multipliedBy(total), "a fuzz worker");
        }

        HistoryChecker.assertConsistent(history);
        assertThat(counter.value).as("increments made under the lock").isEqualTo(total);
        assertThat(resource.acceptedWrites()).as("writes the fenced resource accepted").isEqualTo(total);
    }

    /** One increment under the lock; false if the lock stayed busy (an unfair lock may starve a client a while). */
    private boolean incrementUnderLock(DistributedLock lock, String actor, History history, FencedResource resource,
            Counter counter) throws InterruptedException {
        long requested = History.now();
        Optional<Lease> got = lock.tryLock(patientWait());
        if (got.isEmpty()) {
            return false;
        }
        try (Lease lease = got.get()) {
            History.Grant grant = history.acquired(actor, lock.name(), lease.fencingToken(), requested, History.now());
            if (!grant.check(lease::isValid)) {
                throw new AssertionError(grant + " was not valid right after it was granted");
            }
            // a read-modify-write that loses updates as soon as two holders overlap
            int read = counter.value;
            Thread.yield();
            counter.value = read + 1;
            resource.write(grant);
            grant.check(lease::isValid);
            lease.close();
            grant.released(History.now());
        }
        return true;
    }

    /** A counter whose increment is deliberately not atomic. */
    private static final class Counter {
        volatile int value;
    }
}
