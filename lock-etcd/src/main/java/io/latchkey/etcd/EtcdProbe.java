package io.latchkey.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Startup;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connect's check of an etcd for {@link EtcdLockBackend#probe}: that it answers, that the credentials
 * may read the namespace, and that it grants the TTL the lease asks for, timed as contract rule 2 asks
 * (the start-up allowance of a JVM where jetcd has never connected, see {@link Startup}). One check per
 * instance, on the connecting thread; the JVM-wide start-up state is thread-safe.
 */
final class EtcdProbe {

    /** The backend's logger: connect's lines keep the category they have always had. */
    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    /** Whether jetcd has connected in this JVM yet: the start-up allowance of connect, see {@link Startup}. */
    private static final Startup STARTUP = new Startup();
    /**
     * The probe's request: HTTP/2's connection preface and an empty SETTINGS frame, which etcd's gRPC
     * server answers with its own SETTINGS (a TLS listener closes the connection instead).
     */
    private static final byte[] HTTP2_HELLO = http2Hello();

    private final EtcdLockBackend backend;
    private final Client client;
    private final Duration timeout;
    private final String namespace;
    private final long ttlSeconds;
    private final Duration lease;
    private final String where;

    /** The lease granted for the check, and when its grant was sent ({@link System#nanoTime()}). */
    record Granted(LeaseGrantResponse lease, long sentAt) {
    }

    EtcdProbe(EtcdLockBackend backend, String namespace, long ttlSeconds, Duration lease, String where) {
        this.backend = backend;
        this.client = backend.client();
        this.timeout = backend.timeout();
        this.namespace = namespace;
        this.ttlSeconds = ttlSeconds;
        this.lease = lease;
        this.where = where;
    }

    /**
     * Checks at connect time that etcd answers, that the credentials may read the namespace, and that
     * etcd grants the TTL the lease asks for. The server's time is {@code timeout}: with {@code hosts}
     * (a client of our own) it is first timed with this JVM's own sockets ({@link Startup#probe}), so a
     * refused port, an unresolvable host, a silent listener or a paused etcd fail within
     * {@code timeout}; jetcd's requests then get what is left of it, plus {@link Startup#ALLOWANCE}
     * while jetcd has never connected in this JVM (loading gRPC, Netty and Vert.x and starting the
     * channel is this JVM's time, not etcd's). The lease granted for the check is returned to become the
     * client's session, so the first lock costs no grant of its own.
     *
     * @param hosts the endpoints to probe, or {@code null} for the application's own client, whose
     *     endpoints are its own: then jetcd's requests alone are timed, with the same allowance
     * @throws IllegalArgumentException if etcd raises the TTL to its minimum: the lease would then not
     *     be the failover bound
     */
    Granted check(List<LockUri.HostAndPort> hosts) {
        long start = System.nanoTime();
        Deadline deadline = Deadline.after(timeout);
        if (hosts != null) {
            try {
                Startup.probe(hosts, deadline, HTTP2_HELLO, "etcd");
            } catch (Startup.NoAnswer e) {
                throw new LockBackendUnavailableException(null, "could not connect to etcd at " + where + " within the"
                        + " timeout option (" + Durations.format(timeout) + "): " + e.getMessage()
                        + (e.silent() ? "; check that etcd runs and is reachable, or raise the timeout option" : ""), null);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException(null, "interrupted while connecting to etcd at " + where, e);
            }
        }
        Deadline by = deadline.plus(STARTUP.allowance());
        // whole milliseconds, as the options are written: the message quotes it
        Duration bound = Duration.ofMillis(Math.max(0, (by.nanoTime() - start + 500_000) / 1_000_000));
        await(by, bound, start, "reading namespace '" + namespace + "'", client.getKVClient().get(
                EtcdLockBackend.bytes(namespace), GetOption.builder().isPrefix(true).withCountOnly(true).build()));
        long sentAt = System.nanoTime();
        LeaseGrantResponse test = await(by, bound, start, "granting a lease of " + ttlSeconds + "s",
                client.getLeaseClient().grant(ttlSeconds, Math.max(1, by.remainingMillis()), TimeUnit.MILLISECONDS));
        if (test.getTTL() > ttlSeconds) {
            try {
                await(Deadline.after(timeout), timeout, System.nanoTime(), "revoking the lease",
                        client.getLeaseClient().revoke(test.getID()));
            } catch (LockException e) {
                log.debug("could not revoke the lease {} that etcd at {} granted for too long ({}); it expires on its own",
                        Long.toHexString(test.getID()), where, e.getMessage());
            }
            throw new IllegalArgumentException("lease=" + Durations.format(lease) + " is below what etcd at " + where
                    + " grants: the lease asks for a TTL of " + ttlSeconds + "s (its whole seconds less the "
                    + EtcdLockProvider.EXPIRY_CHECK_MILLIS + "ms etcd may take to expire it), and this etcd's minimum"
                    + " TTL is " + test.getTTL() + "s (1.5 x its --election-timeout, rounded up); use lease="
                    + Durations.format(Duration.ofSeconds(test.getTTL()).plusMillis(EtcdLockProvider.EXPIRY_CHECK_MILLIS))
                    + " or more");
        }
        return new Granted(test, sentAt);
    }

    /** Tells the start-up allowance that jetcd has connected in this JVM: later connects get none. */
    static void connected() {
        STARTUP.connected();
    }

    /** One request of connect, awaited until {@code by}; its failure names {@code bound}, the whole of connect's. */
    private <T> T await(Deadline by, Duration bound, long start, String what, CompletableFuture<T> future) {
        try {
            return future.get(Math.max(1, by.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw backend.silent(null, what, start, bound, e);
        } catch (ExecutionException e) {
            throw backend.failed(null, what, start, bound, e.getCause());
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new LockException(null, "interrupted while " + what + " at etcd " + where, e);
        }
    }

    private static byte[] http2Hello() {
        byte[] preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] hello = java.util.Arrays.copyOf(preface, preface.length + 9);
        hello[preface.length + 3] = 0x4; // a SETTINGS frame of length 0, no flags, stream 0
        return hello;
    }
}
