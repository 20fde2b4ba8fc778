package io.latchkey.etcd;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.spi.Durations;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the holders of one {@link EtcdSession} that a grant was ended on the server: at every keepalive
 * of the session, one read-only transaction requires every plain lock's key held for a renewal period
 * or longer to still have its create revision, and reports a key that has not as lost
 * ({@link EtcdLease#deletedOnServer}).
 *
 * <p>Why: a force release ({@link EtcdAdmin#forceRelease}) deletes the holder's key and leaves its
 * lease alone, since the lease carries the client's other locks too, so the holder's keepalives go on
 * succeeding and tell it nothing. The key is read instead of watched because a watch per grant is a
 * gRPC stream per lock in jetcd, and one more request on every acquire.
 *
 * <p>What it costs: nothing for a grant shorter than a renewal period (most critical sections), so an
 * uncontended lock+unlock stays two RPCs; one read-only transaction (no Raft commit) per keepalive, a
 * third of the lease, per client that holds a lock that long, whatever the number of its locks up to
 * {@value #MAX_OPS} (etcd's default {@code --max-txn-ops}), one more per {@value #MAX_OPS} beyond. A
 * grant ended on the server is learnt at the first keepalive once it is a renewal period old: within
 * two renewal periods (two thirds of the lease) of the force release, before the lease could have
 * expired. Permits and read or write grants are not read: no client ends them through Latchkey.
 *
 * <p>A read that fails or goes unanswered within the {@code timeout} option reports nothing: the
 * session's own keepalive decides about an unreachable etcd. Thread-safe.
 */
final class EtcdGrantCheck {

    private static final Logger log = LoggerFactory.getLogger(EtcdGrantCheck.class);
    /** etcd's default {@code --max-txn-ops}: the most compares, and the most reads, one transaction may hold. */
    static final int MAX_OPS = 128;
    private static final GetOption KEY_ONLY = GetOption.builder().withKeysOnly(true).build();

    private final EtcdLockBackend backend;
    private final ScheduledExecutorService executor;
    private final AtomicBoolean inFlight = new AtomicBoolean();

    EtcdGrantCheck(EtcdLockBackend backend, ScheduledExecutorService executor) {
        this.backend = backend;
        this.executor = executor;
    }

    /** Whether {@code key} is due for a check now: a plain lock's grant held since {@code heldSince} or earlier. */
    static boolean due(EtcdLease key, long heldSince) {
        return key.checkedAtRenewal() && key.heldSince(heldSince);
    }

    /**
     * Sends the check of {@code grants} and returns at once; reports each key found gone when etcd
     * answers. Skipped while the last check is unanswered.
     */
    void send(List<EtcdLease> grants) {
        if (grants.isEmpty() || !inFlight.compareAndSet(false, true)) {
            return;
        }
        List<CompletableFuture<?>> reads = new ArrayList<>();
        try {
            for (int from = 0; from < grants.size(); from += MAX_OPS) {
                reads.add(sendChunk(grants.subList(from, Math.min(grants.size(), from + MAX_OPS))));
            }
        } catch (RuntimeException e) {
            log.debug("could not send the check of {} held keys: {}", grants.size(), EtcdErrors.message(e));
        }
        CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0])).whenComplete((r, e) -> inFlight.set(false));
    }

    private CompletableFuture<TxnResponse> sendChunk(List<EtcdLease> grants) {
        Cmp[] alive = new Cmp[grants.size()];
        Op[] reads = new Op[grants.size()];
        for (int i = 0; i < grants.size(); i++) {
            EtcdLease grant = grants.get(i);
            alive[i] = new Cmp(grant.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(grant.fencingToken()));
            reads[i] = Op.get(grant.key(), KEY_ONLY);
        }
        // reads only, in both branches: etcd serves it as a linearizable read, no Raft proposal
        CompletableFuture<TxnResponse> answer = backend.client().getKVClient().txn().If(alive).Else(reads).commit();
        ScheduledFuture<?> deadline;
        try {
            deadline = executor.schedule(() -> answer.completeExceptionally(new TimeoutException("no answer within "
                    + Durations.format(backend.timeout()))), backend.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return answer; // the client is closing
        }
        return answer.whenComplete((r, e) -> {
            deadline.cancel(false);
            if (e != null) {
                log.debug("could not check {} held keys: {}", grants.size(), EtcdErrors.message(e));
            } else if (!r.isSucceeded()) {
                for (int i = 0; i < grants.size(); i++) {
                    List<KeyValue> kvs = r.getGetResponses().get(i).getKvs();
                    EtcdLease grant = grants.get(i);
                    if (kvs.isEmpty() || kvs.get(0).getCreateRevision() != grant.fencingToken()) {
                        grant.deletedOnServer();
                    }
                }
            }
        });
    }
}
