package io.latchkey.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The raw clients Latchkey is compared with, each used the way its own documentation shows, with the
 * same lease as Latchkey ({@link Target#lease()}) and default settings otherwise.
 *
 * <p>Names are prefixed with {@code bench} so that they never meet Latchkey's keys, paths or topics.
 */
final class RawLockers {

    private RawLockers() {
    }

    /** Redisson {@code RLock} with its watchdog (no lease time): lockWatchdogTimeout = lease. */
    static Locker redissonLock(Target t) {
        RedissonClient r = redisson(t);
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws InterruptedException {
                RLock lock = r.getLock("bench:" + name);
                return lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS) ? lock::unlock : null;
            }

            /** {@code RReadWriteLock}'s modes, with the watchdog as the lock's. */
            @Override
            public Held acquireMode(String name, boolean write, Duration wait) throws InterruptedException {
                org.redisson.api.RReadWriteLock rw = r.getReadWriteLock("bench:rw:" + name);
                RLock lock = write ? rw.writeLock() : rw.readLock();
                return lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS) ? lock::unlock : null;
            }

            @Override
            public void close() {
                r.shutdown();
            }
        };
    }

    /** Redisson {@code RFencedLock} with its watchdog, taking the token as a fenced user would. */
    static Locker redissonFencedLock(Target t) {
        RedissonClient r = redisson(t);
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) {
                RFencedLock lock = r.getFencedLock("bench:" + name);
                Long token = lock.tryLockAndGetToken(wait.toMillis(), TimeUnit.MILLISECONDS);
                return token != null ? lock::unlock : null;
            }

            @Override
            public void close() {
                r.shutdown();
            }
        };
    }

    private static RedissonClient redisson(Target t) {
        Config config = new Config();
        config.useSingleServer().setAddress(t.uri().replaceFirst("\\?.*$", ""))
                .setTimeout((int) t.timeout().toMillis());
        config.setLockWatchdogTimeout(t.lease().toMillis());
        return Redisson.create(config);
    }

    /** Curator {@code InterProcessMutex}, a new mutex per acquisition; session timeout = lease. */
    static Locker curatorMutex(Target t) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(String.join(",", t.hostPorts()),
                (int) t.lease().toMillis(), (int) t.timeout().toMillis(), new ExponentialBackoffRetry(100, 3));
        c.start();
        if (!c.blockUntilConnected((int) Duration.ofMinutes(1).toMillis(), TimeUnit.MILLISECONDS)) {
            c.close();
            throw new IllegalStateException("curator did not connect to " + t.uri() + " within a minute");
        }
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws Exception {
                InterProcessMutex m = new InterProcessMutex(c, "/bench/" + name);
                return m.acquire(wait.toMillis(), TimeUnit.MILLISECONDS) ? m::release : null;
            }

            /** {@code InterProcessReadWriteLock}'s modes, a new lock per acquisition as the mutex. */
            @Override
            public Held acquireMode(String name, boolean write, Duration wait) throws Exception {
                var rw = new org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock(c, "/bench/rw/" + name);
                InterProcessMutex m = write ? rw.writeLock() : rw.readLock();
                return m.acquire(wait.toMillis(), TimeUnit.MILLISECONDS) ? m::release : null;
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }

    static Client etcd(Target t) {
        return Client.builder().endpoints(t.hostPorts().stream().map(h -> "http://" + h).toArray(String[]::new)).build();
    }

    /**
     * A lease per thread, granted once and kept alive, as a jetcd user holding several locks at once
     * must do: the Lock RPC's key is the name plus the lease id, so two threads on one lease would both
     * "hold" the lock.
     */
    private static final class ThreadLeases implements AutoCloseable {
        private final Client client;
        private final long ttlSeconds;
        private final Map<Thread, Long> leases = new ConcurrentHashMap<>();
        private final List<CloseableClient> keepAlives = new CopyOnWriteArrayList<>();

        ThreadLeases(Client client, Duration lease) {
            this.client = client;
            this.ttlSeconds = Math.max(2, lease.toSeconds());
        }

        long current() throws ExecutionException, InterruptedException {
            Long id = leases.get(Thread.currentThread());
            if (id == null) {
                id = client.getLeaseClient().grant(ttlSeconds).get().getID();
                keepAlives.add(client.getLeaseClient().keepAlive(id, new StreamObserver<LeaseKeepAliveResponse>() {
                    @Override
                    public void onNext(LeaseKeepAliveResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                }));
                leases.put(Thread.currentThread(), id);
            }
            return id;
        }

        @Override
        public void close() throws Exception {
            keepAlives.forEach(CloseableClient::close);
            for (long id : leases.values()) {
                client.getLeaseClient().revoke(id).get();
            }
        }
    }

    /** jetcd's {@code Lock} service on a lease kept alive (one per thread), unlock on release. */
    static Locker jetcdLock(Target t) {
        Client c = etcd(t);
        ThreadLeases leases = new ThreadLeases(c, t.lease());
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws Exception {
                CompletableFuture<io.etcd.jetcd.lock.LockResponse> f =
                        c.getLockClient().lock(bytes("bench/lock/" + name), leases.current());
                try {
                    ByteSequence key = f.get(wait.toMillis(), TimeUnit.MILLISECONDS).getKey();
                    return () -> c.getLockClient().unlock(key).get();
                } catch (TimeoutException e) {
                    f.cancel(true);
                    return null;
                }
            }

            @Override
            public void close() throws Exception {
                leases.close();
                c.close();
            }
        };
    }

    /**
     * The floor on etcd: one txn that puts the key if it does not exist, bound to a lease kept alive
     * (one per thread); a waiter watches for the key's deletion and tries again; release deletes the key
     * if it is still ours. Two Raft commits per lock+unlock.
     */
    static Locker jetcdTxn(Target t) {
        Client c = etcd(t);
        ThreadLeases leases = new ThreadLeases(c, t.lease());
        KV kv = c.getKVClient();
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws Exception {
                ByteSequence key = bytes("bench/txn/" + name);
                ByteSequence owner = bytes(UUID.randomUUID().toString());
                long deadline = System.nanoTime() + wait.toNanos();
                while (true) {
                    TxnResponse r = kv.txn()
                            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(key, owner, PutOption.builder().withLeaseId(leases.current()).build()))
                            .commit().get();
                    if (r.isSucceeded()) {
                        return () -> kv.txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(owner)))
                                .Then(Op.delete(key, DeleteOption.DEFAULT))
                                .commit().get();
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return null;
                    }
                    CompletableFuture<Void> deleted = new CompletableFuture<>();
                    WatchOption from = WatchOption.builder().withRevision(r.getHeader().getRevision() + 1)
                            .withNoPut(true).build();
                    try (Watch.Watcher w = c.getWatchClient().watch(key, from, resp -> {
                        if (resp.getEvents().stream().anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE)) {
                            deleted.complete(null);
                        }
                    })) {
                        deleted.get(left, TimeUnit.NANOSECONDS);
                    } catch (TimeoutException e) {
                        return null;
                    }
                }
            }

            @Override
            public void close() throws Exception {
                leases.close();
                c.close();
            }
        };
    }

    /**
     * The naive consumer lock of the seed article: per tryLock a new consumer with group id = topic,
     * subscribed to the lock's single-partition topic, polled until it is assigned the partition; the
     * lock is released by closing the consumer. Defaults otherwise (the default assignors; session
     * timeout = lease, heartbeat a third of it). The topic is created at the first use of a name, as the
     * broker does not create topics on its own.
     */
    static Locker kafkaNaive(Target t) {
        String bootstrap = String.join(",", t.hostPorts());
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Admin admin = Admin.create(ap);
        Set<String> known = ConcurrentHashMap.newKeySet();
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws Exception {
                String topic = "bench." + name.replaceAll("[^a-zA-Z0-9._-]", "_");
                if (known.add(topic)) {
                    try {
                        admin.createTopics(List.of(new NewTopic(topic, Optional.of(1), Optional.empty()))).all().get();
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof TopicExistsException)) {
                            known.remove(topic);
                            throw e;
                        }
                    }
                }
                Properties p = new Properties();
                p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ConsumerConfig.GROUP_ID_CONFIG, topic);
                p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(t.lease().toMillis()));
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, String.valueOf(t.lease().toMillis() / 3));
                p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
                boolean held = false;
                try {
                    consumer.subscribe(List.of(topic));
                    long deadline = System.nanoTime() + wait.toNanos();
                    do {
                        consumer.poll(Duration.ofMillis(100));
                        held = !consumer.assignment().isEmpty();
                    } while (!held && System.nanoTime() - deadline < 0);
                } finally {
                    if (!held) {
                        consumer.close();
                    }
                }
                return held ? consumer::close : null;
            }

            @Override
            public void close() {
                admin.close();
            }
        };
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
