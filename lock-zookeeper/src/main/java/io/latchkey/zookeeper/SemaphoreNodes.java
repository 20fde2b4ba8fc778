package io.latchkey.zookeeper;

import io.latchkey.LockException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.KeeperException;

/**
 * The children of a semaphore's node and what they say: waiter nodes {@code _c_<uuid>-wait-<seq>}
 * in sequence order, slot nodes {@code slot-<k>}, the number of permits in the node's data, what a slot
 * node's data holds, and the errors of the transaction that takes a slot. Stateless and thread-safe.
 *
 * <p>A slot node's data is the name of the waiter node that took it, then, on a line of its own, the
 * {@link io.latchkey.Holder} text of the permit's grant ({@link io.latchkey.spi.HolderStamp}). The
 * waiter's name comes first because the acquisition finds its own slot by it after an answer lost with the
 * connection; slots written by an older Latchkey hold the waiter's name only, and name no holder.
 */
final class SemaphoreNodes {

    static final String WAITER_PREFIX = "wait-";
    static final String SLOT_PREFIX = "slot-";

    private SemaphoreNodes() {
    }

    /** The number of permits stored in a semaphore node's data. */
    static int permits(byte[] data, String name, String subject, String path) {
        String stored = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).trim();
        try {
            return Integer.parseInt(stored);
        } catch (NumberFormatException e) {
            throw new LockException(name, "zookeeper node " + path + " of " + subject + " holds '" + stored + "', not a"
                    + " number of permits; it was not written by Latchkey: delete it while no permit is held", e);
        }
    }

    /** The refusal of a request for {@code permits} permits of a semaphore stored with {@code stored}. */
    static IllegalArgumentException mismatch(String subject, String where, int stored, int permits) {
        return new IllegalArgumentException(subject + " (" + where + ") has " + stored + " permits on the server,"
                + " and this call asked for " + permits + ": every holder of a semaphore must use the same number of"
                + " permits");
    }

    /** The data a grant writes into its slot node: the taking waiter's node name, then the holder text. */
    static byte[] slotData(String waiter, String holder) {
        return (waiter + "\n" + holder).getBytes(StandardCharsets.UTF_8);
    }

    /** The name of the waiter node that took a slot, from its data (all of it if an older Latchkey wrote it). */
    static String slotWaiter(byte[] data) {
        String text = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8);
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }

    /** The holder text in a slot node's data, or null if there is none (a slot of an older Latchkey). */
    static String slotHolder(byte[] data) {
        String text = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8);
        int end = text.indexOf('\n');
        return end < 0 ? null : text.substring(end + 1);
    }

    /** The waiter nodes among the children, in sequence order. */
    static List<String> waiters(List<String> children) {
        List<String> waiters = new ArrayList<>();
        for (String child : children) {
            if (sequence(child) != null) {
                waiters.add(child);
            }
        }
        waiters.sort(Comparator.comparing(SemaphoreNodes::sequence));
        return waiters;
    }

    /** The sequence part of a waiter node's name ({@code _c_<uuid>-wait-0000000007}), or null if it is none. */
    static String sequence(String child) {
        int at = child.lastIndexOf(WAITER_PREFIX);
        return at < 0 || child.startsWith(SLOT_PREFIX) ? null : child.substring(at + WAITER_PREFIX.length());
    }

    /** The slots held: the numbers of the {@code slot-<k>} children. */
    static Set<Integer> slots(List<String> children) {
        Set<Integer> slots = new HashSet<>();
        for (String child : children) {
            if (child.startsWith(SLOT_PREFIX)) {
                try {
                    slots.add(Integer.parseInt(child.substring(SLOT_PREFIX.length())));
                } catch (NumberFormatException e) {
                    // not a slot of Latchkey's
                }
            }
        }
        return slots;
    }

    /** The error code of the transaction's operation {@code at}; 0 if it succeeded or there is no result. */
    static int error(List<CuratorTransactionResult> results, int at) {
        return results != null && results.size() > at ? results.get(at).getError() : 0;
    }

    /** The code of the operation that failed the transaction (the others report a rollback). */
    static int firstError(List<CuratorTransactionResult> results) {
        if (results != null) {
            for (CuratorTransactionResult r : results) {
                if (r.getError() != 0 && r.getError() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return r.getError();
                }
            }
        }
        return KeeperException.Code.SYSTEMERROR.intValue();
    }
}
