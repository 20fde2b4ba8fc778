package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.ReadWriteState;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a read-write lock's grants hold in their Redis keys, and how inspect reads them there. */
class RedisReadWriteTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(20))
            .timeout(Duration.ofSeconds(5)).build();
    private static final String PREFIX = RedisLockBackend.DEFAULT_NAMESPACE + ":";

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);

    private static String cli(String... args) {
        return REDIS.get().cli(List.of(), args).trim();
    }

    private static LockClient client() {
        RedisServer server = REDIS.get();
        return LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS);
    }

    @Test
    @DisplayName("a reader's entry and the writer key's value hold the owner, token, server TIME and holder text that"
            + " inspect shows")
    void inspectReadsTheGrantWhereItIsWritten() throws Exception {
        String name = "rw-grant:" + System.nanoTime();
        String tag = RedisKeys.semaphoreTag(PREFIX, name);
        try (LockClient client = client()) {
            try (Lease read = client.readWriteLock(name).readLock().lock(Duration.ZERO)) {
                String[] grant = cli("ZRANGE", RedisKeys.readersKey(tag), "0", "-1").split(" ", 4);
                assertThat(grant).as("the reader's entry").hasSize(4);
                assertThat(grant[0]).as("its owner field").startsWith("r:");
                assertThat(grant[1]).as("its token").isEqualTo(String.valueOf(read.fencingToken()));
                assertThat(Holder.parse(grant[3]).map(Holder::thread)).as("its holder text: %s", grant[3])
                        .contains(Thread.currentThread().getName());
                LockState reader = client.readWriteLock(name).inspect().readers().get(0);
                assertThat(reader.holder()).as("the holder as inspect reads it").isEqualTo(Holder.parse(grant[3]));
                assertThat(reader.token()).hasValue(read.fencingToken());
                assertThat(reader.since()).as("the grant time as inspect reads it").contains(new GrantTime(
                        Instant.ofEpochMilli(Long.parseLong(grant[2])), GrantTime.Source.BACKEND_AT_GRANT));
            }
            try (Lease write = client.readWriteLock(name).writeLock().lock(Duration.ZERO)) {
                String[] grant = cli("GET", RedisKeys.writerKey(tag)).split(" ", 4);
                assertThat(grant).as("the writer key's value").hasSize(4);
                assertThat(grant[1]).as("its token").isEqualTo(String.valueOf(write.fencingToken()));
                LockState writer = client.readWriteLock(name).inspect().writerState().orElseThrow();
                assertThat(writer.holder()).as("the writer as inspect reads it").isEqualTo(Holder.parse(grant[3]));
                assertThat(writer.token()).hasValue(write.fencingToken());
            }
            assertThat(client.readWriteLock(name).inspect()).isEqualTo(ReadWriteState.free(name));
        }
    }

    @Test
    @DisplayName("the undo of an attempt whose answer was lost, knowing only the owner field, removes the reader's"
            + " entry that begins with it and no other")
    void anUndoFindsTheReaderEntryByItsOwnerField() {
        String tag = RedisKeys.semaphoreTag(PREFIX, "rw-undo:" + System.nanoTime());
        String readers = RedisKeys.readersKey(tag);
        // the other owner's entry comes first, so that a check of the owner field without its space would take it
        cli("ZADD", readers, "9000000000000", "r:c:-10 7 1 owner=a", "9000000000001", "r:c:-1 8 2 owner=b");
        try {
            String[] release = {"EVAL", RedisReadWrite.RELEASE, "4", readers, RedisKeys.writerKey(tag),
                    RedisKeys.readWriteWaitersKey(tag), RedisKeys.readWriteWakeChannel(tag)};
            assertThat(cli(concat(release, "r:c:-1", ""))).as("the undo of r:c:-1").isEqualTo("1");
            assertThat(cli("ZRANGE", readers, "0", "-1")).as("the readers left").isEqualTo("r:c:-10 7 1 owner=a");
            assertThat(cli(concat(release, "r:c:-1", ""))).as("the undo again").isEqualTo("0");
        } finally {
            cli("DEL", readers);
        }
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    @Test
    @DisplayName("a writer key of an older version, its owner field alone, is a writer of unknown holder and still"
            + " excludes a reader")
    void anOlderWriterKeyIsHeldByAnUnknownHolder() throws Exception {
        String name = "rw-older:" + System.nanoTime();
        String writerKey = RedisKeys.writerKey(RedisKeys.semaphoreTag(PREFIX, name));
        cli("SET", writerKey, "w:older-client:-1", "PX", String.valueOf(OPTIONS.lease().toMillis()));
        try (LockClient client = client()) {
            LockState older = client.readWriteLock(name).inspect().writerState().orElseThrow();
            assertThat(older.holder()).as("the older writer: %s", older).contains(Holder.UNKNOWN);
            assertThat(older.token()).as("its token").isEmpty();
            assertThat(older.since()).as("its grant time").isEmpty();
            assertThat(client.readWriteLock(name).readLock().tryLock()).as("a reader beside it").isEmpty();
        } finally {
            cli("DEL", writerKey);
        }
    }
}
