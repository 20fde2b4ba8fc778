package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RPatternTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Whom a release of a read-write lock wakes, counted on its wake channel: the waiters that can now run
 * and no others.
 */
class RedisReadWriteWakeTest {

    /** A long timeout, so that a reader's own retry behind a writer that gave up comes well after a wake-up. */
    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(20))
            .timeout(Duration.ofSeconds(5)).build();
    /** Far longer than any step of the test; only a lock that never wakes its waiters reaches it. */
    private static final Duration PATIENT = OPTIONS.lease().multipliedBy(3);

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);

    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void closeOpened() throws Exception {
        pool.shutdownNow();
        for (AutoCloseable c; (c = opened.pollFirst()) != null; ) {
            c.close();
        }
    }

    private LockClient client() {
        RedisServer server = REDIS.get();
        LockClient c = LockClient.connect(java.net.URI.create(server.uri(server.endpoints())), OPTIONS);
        opened.addFirst(c);
        return c;
    }

    @Test
    @DisplayName("the last reader's release wakes only the waiting writer; the writer's release wakes every waiting reader and no writer")
    void aReleaseWakesTheWaitersThatCanRunAndNoOthers() throws Exception {
        String name = "rw-wake:" + System.nanoTime();
        String tag = RedisKeys.semaphoreTag(RedisLockBackend.DEFAULT_NAMESPACE + ":", name);
        List<String> woken = new CopyOnWriteArrayList<>();
        RedisServer server = REDIS.get();
        Config config = new Config();
        config.useSingleServer().setAddress(server.uri(server.endpoints()));
        RedissonClient raw = Redisson.create(config);
        opened.addFirst(raw::shutdown);
        // a pattern subscriber hears every waiter's channel; PUBLISH counts it, which only matters for entries
        // of waiters gone without leaving, and there are none here
        RPatternTopic wake = raw.getPatternTopic(RedisKeys.wakeChannel(RedisKeys.readWriteWakeChannel(tag), "*"),
                StringCodec.INSTANCE);
        wake.addListener(String.class, (pattern, channel, field) -> woken.add(field));

        Lease first = client().readWriteLock(name).readLock().lock(Duration.ZERO);
        Lease second = client().readWriteLock(name).readLock().lock(Duration.ZERO);
        LockClient writerClient = client();
        Future<Lease> writer = pool.submit(() -> writerClient.readWriteLock(name).writeLock().lock(PATIENT));
        awaitWaiters(server, tag, 1);
        List<Future<Optional<Lease>>> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            LockClient c = client();
            readers.add(pool.submit(() -> c.readWriteLock(name).readLock().tryLock(PATIENT)));
        }
        awaitWaiters(server, tag, 3);

        first.close();
        second.close();
        Lease write = writer.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
        // the subscriber gets the server's messages in order: once it has the writer's, it has any before it
        Awaitility.await().atMost(PATIENT).until(() -> !woken.isEmpty());
        assertThat(woken).as("wake-ups of the readers' releases: the first wakes nobody, the last the writer alone")
                .singleElement().asString().startsWith("w:");
        assertThat(readers).as("readers behind the writer while it holds").noneMatch(Future::isDone);

        woken.clear();
        write.close();
        // both readers hold before either closes: a reader's release while the other still waits would wake it
        // again, as a release wakes every waiter that can run
        List<Lease> reads = new ArrayList<>();
        for (Future<Optional<Lease>> r : readers) {
            Lease read = r.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            opened.addFirst(read::close);
            reads.add(read);
            assertThat(read.fencingToken()).isGreaterThan(write.fencingToken());
        }
        Awaitility.await().atMost(PATIENT).until(() -> woken.size() >= 2);
        assertThat(woken).as("wake-ups of the writer's release: each waiting reader once, no writer").hasSize(2)
                .allMatch(f -> f.startsWith("r:")).doesNotHaveDuplicates();
        reads.forEach(Lease::close);
    }

    @Test
    @DisplayName("a writer whose wait ends wakes the readers it held back, who would otherwise wait for their own retry")
    void aWriterThatGivesUpLetsTheReadersIn() throws Exception {
        String name = "rw-give-up:" + System.nanoTime();
        String tag = RedisKeys.semaphoreTag(RedisLockBackend.DEFAULT_NAMESPACE + ":", name);
        RedisServer server = REDIS.get();
        Lease first = client().readWriteLock(name).readLock().lock(Duration.ZERO);
        Duration writerWait = Duration.ofSeconds(2);
        LockClient writerClient = client();
        Future<Optional<Lease>> writer = pool.submit(() -> writerClient.readWriteLock(name).writeLock().tryLock(writerWait));
        awaitWaiters(server, tag, 1);
        LockClient readerClient = client();
        Future<Optional<Lease>> reader = pool.submit(() -> readerClient.readWriteLock(name).readLock().tryLock(PATIENT));
        awaitWaiters(server, tag, 2);
        assertThat(writer.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).as("the writer, while a reader holds").isEmpty();
        long gaveUp = System.nanoTime();
        try (Lease read = reader.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
            // the kit's wake-up bound (250 ms + slack); the reader's own retry would come a timeout later
            assertThat(Duration.ofNanos(System.nanoTime() - gaveUp)).as("from the writer giving up to the reader's grant")
                    .isLessThanOrEqualTo(Duration.ofMillis(250 + 2500));
            assertThat(read.isValid()).isTrue();
        }
        first.close();
    }

    /** Waits until {@code n} waiters are queued beside the read-write lock of {@code tag}, seen by the server. */
    private static void awaitWaiters(RedisServer server, String tag, int n) {
        Awaitility.await().atMost(PATIENT).pollInterval(Duration.ofMillis(50)).until(() -> Integer.parseInt(
                server.cli(List.of(), "ZCARD", RedisKeys.readWriteWaitersKey(tag)).trim()) == n);
    }
}
