package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What is particular to etcd in force release and list: key order is not the names' order, a queue may
 * span pages, other kinds' keys share the namespace, and a force release leaves the holder's lease, with
 * its client's other locks, alone.
 */
class EtcdAdminTest {

    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    @RegisterExtension
    static final EtcdFixture ETCD = new EtcdFixture();

    private static EtcdServer server() {
        return ETCD.server();
    }

    private static Client raw() {
        return ETCD.raw();
    }

    /** A client in a namespace of its own, so that list("") sees only what the test put there. */
    private static LockClient connect(String namespace) {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), LockOptions.builder().lease(LEASE)
                .timeout(TIMEOUT).namespace(namespace).build());
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Test
    void listKeepsTheNamesOrderWhereKeysSortOtherwiseAndSkipsOtherKinds() throws Exception {
        // by key bytes: 'a%2Fb/' < 'a%25/' < 'a-/' < 'a.b/' < 'a/' < 'a b/'... and by name 'a' < 'a b' < 'a%' < 'a-' ...
        List<String> names = List.of("a", "a b", "a%", "a-", "a.b", "a/b", "aé", "b");
        try (LockClient holder = connect("/etcd-admin-order/"); LockClient waiter = connect("/etcd-admin-order/")) {
            List<Lease> held = new ArrayList<>();
            for (String name : names) {
                held.add(holder.lock(name).tryLock(Duration.ZERO).orElseThrow());
            }
            CompletableFuture<Optional<Lease>> queued = waiter.lock("a").tryLockAsync(LEASE.multipliedBy(3));
            holder.semaphore("a", 2).tryAcquire().orElseThrow();
            holder.semaphore("s", 1).tryAcquire().orElseThrow();
            holder.readWriteLock("a").readLock().tryLock(Duration.ZERO).orElseThrow();
            holder.readWriteLock("rw").writeLock().tryLock(Duration.ZERO).orElseThrow();
            // a schedule slot key beside the queue of 'a.b': '<namespace>a.b.slot'
            raw().getKVClient().put(bytes("/etcd-admin-order/a.b.slot"), bytes("2026-01-01T00:00:00Z")).get(10, TimeUnit.SECONDS);
            Thread.sleep(TIMEOUT.toMillis() / 2); // the waiter's key queues behind the holder's meanwhile

            try (LockClient admin = connect("/etcd-admin-order/")) {
                assertThat(admin.list("")).as("every held lock, in the names' order").containsExactlyElementsOf(names);
                List<String> paged = new ArrayList<>();
                for (List<String> page = admin.list("", null, 2); !page.isEmpty();
                        page = admin.list("", page.get(page.size() - 1), 2)) {
                    assertThat(page).hasSizeLessThanOrEqualTo(2);
                    paged.addAll(page);
                }
                assertThat(paged).as("page by page").containsExactlyElementsOf(names);
                assertThat(admin.list("a")).containsExactly("a", "a b", "a%", "a-", "a.b", "a/b", "aé");
                assertThat(admin.list("a%")).containsExactly("a%");
                assertThat(admin.list("a/")).containsExactly("a/b");
                assertThat(admin.list("a", "a-", 10)).containsExactly("a.b", "a/b", "aé");
            }
            held.get(0).close();
            queued.get(LEASE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow().close();
        } finally {
            raw().getKVClient().delete(bytes("/etcd-admin-order/"), DeleteOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aQueueLongerThanAPageIsListedOnceAndTheNamesAfterItStillAre() throws Exception {
        String namespace = "/etcd-admin-pages/";
        try {
            // keys as a lock's queue lays them out, written here directly: more than a page of one queue
            List<Op> puts = new ArrayList<>();
            for (int i = 0; i < EtcdAdmin.PAGE + 5; i++) {
                puts.add(Op.put(bytes(namespace + "q/1-" + Long.toHexString(i)), bytes("waiter"), PutOption.DEFAULT));
            }
            puts.add(Op.put(bytes(namespace + "q.slot"), bytes("2026-01-01T00:00:00Z"), PutOption.DEFAULT));
            puts.add(Op.put(bytes(namespace + "r/2"), bytes("a key of an older version"), PutOption.DEFAULT));
            puts.add(Op.put(bytes(namespace + "%semaphores/t/0"), bytes("1 x"), PutOption.DEFAULT));
            puts.add(Op.put(bytes(namespace + "nested/u/1-1"), bytes("another namespace's lock"), PutOption.DEFAULT));
            for (int from = 0; from < puts.size(); from += 100) {
                raw().getKVClient().txn().Then(puts.subList(from, Math.min(puts.size(), from + 100)).toArray(new Op[0]))
                        .commit().get(10, TimeUnit.SECONDS);
            }
            try (LockClient admin = connect(namespace)) {
                assertThat(admin.list("")).containsExactly("q", "r");
                assertThat(admin.list("", "q", 1)).containsExactly("r");
                assertThat(admin.list("q")).containsExactly("q");
            }
        } finally {
            raw().getKVClient().delete(bytes(namespace), DeleteOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void forceReleaseDeletesOnlyTheHoldersKeyAndLeavesItsLeaseAndOtherLocks() throws Exception {
        String namespace = "/etcd-admin-force/";
        try (LockClient holder = connect(namespace); LockClient admin = connect(namespace);
                LockClient waiter = connect(namespace)) {
            Lease ended = holder.lock("ended").tryLock(Duration.ZERO).orElseThrow();
            Lease kept = holder.lock("kept").tryLock(Duration.ZERO).orElseThrow();
            long lease = keys(namespace + "kept/").get(0).getLease();
            CompletableFuture<Optional<Lease>> waiting = waiter.lock("ended").tryLockAsync(LEASE.multipliedBy(5));
            await("the waiter's key queued").atMost(TIMEOUT.multipliedBy(2))
                    .until(() -> keys(namespace + "ended/").size() == 2);

            long releasedAt = System.nanoTime();
            LockState state = admin.lock("ended").forceRelease();
            assertThat(state.token()).hasValue(ended.fencingToken());
            assertThat(state.waiters()).as("the waiters behind the ended grant").hasValue(1);
            Lease next = waiting.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(next.fencingToken()).as("the waiter's token").isGreaterThan(ended.fencingToken());
            next.close();
            assertThat(keys(namespace + "ended/")).as("the ended grant's key, and the waiter's once released").isEmpty();
            Exception why = ended.lost().toCompletableFuture().get(LEASE.toMillis(), TimeUnit.MILLISECONDS);
            long learnt = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
            // two keepalive periods at most, and the keepalive's own answer time
            assertThat(learnt).as("ms from the force release to the loss").isLessThan(LEASE.toMillis() * 2 / 3
                    + TIMEOUT.toMillis());
            assertThat(why).isInstanceOf(LockLostException.class).hasMessageContaining("'ended'")
                    .hasMessageContaining("deleted on the etcd server").hasMessageContaining(namespace + "ended/");

            // the holder's lease was not revoked: its other lock lives on through its keepalives
            Thread.sleep(LEASE.toMillis());
            assertThat(kept.isValid()).as("the holder's other lock").isTrue();
            assertThat(keys(namespace + "kept/")).singleElement()
                    .satisfies(kv -> assertThat(kv.getLease()).isEqualTo(lease));
            ended.close();
            kept.close();
            assertThat(admin.list("")).isEmpty();
        }
    }

    private static List<KeyValue> keys(String prefix) throws Exception {
        return raw().getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS)
                .getKvs();
    }
}
