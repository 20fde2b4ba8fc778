package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a read-write lock's grants hold in their Redis keys. */
class RedisReadWriteTest {

    private static final String PREFIX = RedisLockBackend.DEFAULT_NAMESPACE + ":";

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);

    private static String cli(String... args) {
        return REDIS.get().cli(List.of(), args).trim();
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
}
