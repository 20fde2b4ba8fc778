package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.spi.Durations;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * The last completed schedule slot of one lock: the persistent node {@code slot} beside the lock nodes
 * in the lock name's node, holding {@code "<fencing token> <ISO-8601 instant>"}.
 *
 * <p>The write is one ZooKeeper transaction: a {@code check} that the holder's own ephemeral lock node
 * still exists (it exists only while its session lives, and while it exists no later node can hold
 * the lock), then a {@code setData} with the version just read, or the node's creation if there was
 * none. A stored token higher than the holder's refuses the write before it is tried. So a holder
 * whose session expired, or that lost the lock to a later holder, cannot overwrite the record, and two
 * writers never interleave a read and a write.
 *
 * <p>The {@code slot} node keeps the lock name's container node from being deleted once its lock nodes
 * are gone: the record of what ran outlives the lock on purpose, one small node per lock name that
 * ever recorded a slot. Plain Curator mutexes on the same path sort {@code slot} after every lock node,
 * so it never counts as a holder or a predecessor. Stateless; thread-safe.
 */
final class SlotRecord {

    static final String NODE = "slot";
    private static final int ATTEMPTS = 5;

    private SlotRecord() {
    }

    static String path(String lockNode) {
        return lockNode.substring(0, lockNode.lastIndexOf('/') + 1) + NODE;
    }

    /** A recorded slot: the writer's fencing token and the slot. */
    private record Recorded(long token, Instant slot, int version) {
    }

    static Optional<Instant> read(ZooKeeperBackend backend, String lockName, String lockNode) {
        Recorded r = readRecord(backend, lockName, lockNode);
        return r == null ? Optional.empty() : Optional.of(r.slot);
    }

    static void write(ZooKeeperBackend backend, String lockName, String lockNode, long token, Instant slot) {
        String path = path(lockNode);
        byte[] data = (token + " " + slot).getBytes(StandardCharsets.UTF_8);
        for (int attempt = 1; ; attempt++) {
            Recorded before = readRecord(backend, lockName, lockNode);
            if (before != null && before.token > token) {
                throw refused(backend, lockName, slot, token, "a later holder (token " + before.token + ") recorded slot "
                        + before.slot);
            }
            CuratorOp write;
            try {
                write = before == null
                        ? backend.client.transactionOp().create().withMode(CreateMode.PERSISTENT).withACL(backend.acl)
                                .forPath(path, data)
                        : backend.client.transactionOp().setData().withVersion(before.version).forPath(path, data);
                CuratorOp check = backend.client.transactionOp().check().forPath(lockNode);
                CompletableFuture<List<CuratorTransactionResult>> done = new CompletableFuture<>();
                backend.client.transaction().inBackground((c, event) -> done.complete(event.getOpResults()))
                        .forOperations(List.of(check, write));
                List<CuratorTransactionResult> results = await(backend, lockName, done, "record slot " + slot + " of");
                int checkError = results.size() > 0 ? results.get(0).getError() : 0;
                int writeError = results.size() > 1 ? results.get(1).getError() : 0;
                if (checkError == 0 && writeError == 0) {
                    return;
                }
                if (checkError == KeeperException.Code.NONODE.intValue()) {
                    throw refused(backend, lockName, slot, token, "its lock node " + lockNode + " no longer exists");
                }
                boolean raced = writeError == KeeperException.Code.BADVERSION.intValue()
                        || writeError == KeeperException.Code.NODEEXISTS.intValue()
                        || writeError == KeeperException.Code.NONODE.intValue();
                if (!raced || attempt == ATTEMPTS) {
                    int code = checkError != 0 && checkError != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()
                            ? checkError : writeError;
                    throw backend.failure(lockName, "record slot " + slot + " of", KeeperException.create(
                            KeeperException.Code.get(code), path));
                }
            } catch (LockException e) {
                throw e;
            } catch (Exception e) {
                throw backend.failure(lockName, "record slot " + slot + " of", e);
            }
        }
    }

    private static Recorded readRecord(ZooKeeperBackend backend, String lockName, String lockNode) {
        String path = path(lockNode);
        CompletableFuture<Recorded> done = new CompletableFuture<>();
        try {
            backend.client.getData().inBackground((c, event) -> {
                KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                if (code == KeeperException.Code.NONODE) {
                    done.complete(null);
                } else if (code != KeeperException.Code.OK) {
                    done.completeExceptionally(KeeperException.create(code, path));
                } else {
                    try {
                        String[] parts = new String(event.getData(), StandardCharsets.UTF_8).split(" ", 2);
                        done.complete(new Recorded(Long.parseLong(parts[0]), Instant.parse(parts[1]),
                                event.getStat().getVersion()));
                    } catch (RuntimeException e) {
                        done.completeExceptionally(new IllegalStateException("zookeeper node " + path + " does not hold"
                                + " '<token> <instant>': " + e.getMessage(), e));
                    }
                }
            }).forPath(path);
        } catch (Exception e) {
            throw backend.failure(lockName, "read the last completed slot of", e);
        }
        return await(backend, lockName, done, "read the last completed slot of");
    }

    private static <T> T await(ZooKeeperBackend backend, String lockName, CompletableFuture<T> f, String doing) {
        try {
            return f.get(backend.timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw backend.failure(lockName, doing, e.getCause());
        } catch (TimeoutException e) {
            throw new LockBackendUnavailableException(lockName, "zookeeper did not answer within the timeout option ("
                    + Durations.format(backend.timeout) + ") to " + doing + " lock '" + lockName + "' ("
                    + backend.describe(lockName) + "); check that the ensemble is up and reachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, "interrupted while trying to " + doing + " lock '" + lockName + "' ("
                    + backend.describe(lockName) + ")", e);
        }
    }

    private static LockLostException refused(ZooKeeperBackend backend, String lockName, Instant slot, long token,
            String why) {
        return new LockLostException(lockName, "lock '" + lockName + "' (" + backend.describe(lockName) + ") refused to"
                + " record slot " + slot + " for token " + token + ": " + why + "; the slot may run again elsewhere");
    }
}
