package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * No deadlock: holders that ask for {@code {a, b}}, {@code {b, c}} and {@code {c, a}}, each in both
 * orders (a circle that deadlocks when each takes its names in the order given), on several threads of
 * two clients and in a child JVM, all finish every round, and no two of them ever hold a name at once.
 */
abstract class MultiLockOrderTests extends MultiLockGroup {

    /** Rounds per thread: each round takes a multi-lock, checks it, and closes it. */
    static final int ROUNDS = 4;
    /** Threads per client. */
    static final int THREADS = 3;
    /** Rounds of the child JVM. */
    static final int CHILD_ROUNDS = 3;

    @Test
    @DisplayName("3 threads on each of 2 clients and a child JVM take {a, b}, {b, c}, {c, a} in both orders: all finish, none overlap")
    void oppositeOrdersNeverDeadlock() throws Exception {
        List<String> names = List.of(name("a"), name("b"), name("c"));
        List<List<String>> circle = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            List<String> pair = List.of(names.get(i), names.get((i + 1) % names.size()));
            circle.add(pair);
            circle.add(List.of(pair.get(1), pair.get(0)));
        }
        History history = new History();
        ChildHolder child = childHolder();
        // the fuzz's options: as many hand-overs as the fuzz of rule 1, on a backend that hands over on a heartbeat
        List<LockClient> clients = List.of(track(contract().newClient(contract().fuzzOptions())),
                track(contract().newClient(contract().fuzzOptions())));
        ExecutorService pool = executor();
        List<Future<Integer>> workers = new ArrayList<>();
        int worker = 0;
        for (LockClient client : clients) {
            for (int t = 0; t < THREADS; t++, worker++) {
                String actor = "client-" + clients.indexOf(client) + "-thread-" + t;
                int first = worker;
                workers.add(pool.submit(rounds(history, actor, i -> client.multiLock(circle.get((first + i) % circle.size())))));
            }
        }
        Future<Integer> childRounds = pool.submit(() -> {
            for (int i = 0; i < CHILD_ROUNDS; i++) {
                List<History.Grant> grants = childHolds(child, circle.get(i % circle.size()), history);
                ChildHolder.Reply released = child.request("release", tryBound(java.time.Duration.ZERO).multipliedBy(2));
                if (!released.kind().equals("released")) {
                    throw child.failure("the child's answer to release: " + released);
                }
                grants.forEach(g -> g.released(released.receivedAt()));
            }
            return CHILD_ROUNDS;
        });

        // a deadlock would end each waiting call after patientWait with an AssertionError, not a hang
        java.time.Duration bound = tryBound(patientWait()).multipliedBy((long) ROUNDS * (THREADS * 2 + 1));
        for (Future<Integer> w : workers) {
            assertThat(await(w, bound, "a thread's rounds")).isEqualTo(ROUNDS);
        }
        assertThat(await(childRounds, bound, "the child's rounds")).isEqualTo(CHILD_ROUNDS);
        HistoryChecker.assertConsistent(history);
    }

    /** What one thread does: {@link #ROUNDS} times, take the multi-lock of the round, record it, close it. */
    private Callable<Integer> rounds(History history, String actor, java.util.function.IntFunction<MultiLock> ofRound) {
        return () -> {
            for (int i = 0; i < ROUNDS; i++) {
                MultiLock lock = ofRound.apply(i);
                long requested = History.now();
                MultiLease lease = lock.tryLock(patientWait()).orElseThrow(() -> new AssertionError(
                        actor + ": multi-lock " + lock.names() + " was not granted within " + patientWait()));
                List<History.Grant> grants = record(history, actor, lease, requested, History.now());
                lease.close();
                long closed = History.now();
                grants.forEach(g -> g.released(closed));
            }
            return ROUNDS;
        };
    }
}
