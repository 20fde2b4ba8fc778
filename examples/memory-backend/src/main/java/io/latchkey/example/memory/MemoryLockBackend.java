package io.latchkey.example.memory;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Pauses;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend on a {@link MemoryLockServer}: one connection (the server's session) per client,
 * reopened on the next request after it closed, and a ping at a third of the lease that keeps the
 * session, its waiting requests and every grant on it alive.
 *
 * <p>Evidence: a grant and every answered ping are confirmed from the moment their request was
 * sent, with the TTL the server said it keeps; a closed connection is a loss of every grant on it,
 * since the server ends the session and its grants with the connection. An interrupted acquire
 * withdraws its request, so that nothing is left queued. An acquire that gives up because this process
 * itself was paused past its bound says so ({@link Pauses}) instead of blaming the server.
 *
 * <p>Semaphores: a {@code permit} request per permit on the same session, so a permit has exactly the
 * evidence, renewal and loss of a lock's grant; the server keeps semaphores in a table apart from
 * locks, under the same keys, and answers another number of permits with the semaphore's own, which
 * becomes an {@link IllegalArgumentException} naming both. A permit request carries the holder text as
 * a lock's does, and one {@code slots} request reads every held slot's token, TTL left and holder text
 * for {@code inspect}; a semaphore nobody uses is not created by it.
 *
 * <p>Threads: one pinger, and one reader per open connection, named {@code latchkey-memory-<n>-...}.
 * Thread-safe.
 */
final class MemoryLockBackend implements SemaphoreBackend {

    private static final Logger log = LoggerFactory.getLogger(MemoryLockBackend.class);
    private static final AtomicInteger BACKENDS = new AtomicInteger();
    /** The pause between attempts to reach a server that refused the connection or dropped it. */
    private static final long RETRY_MILLIS = 50;

    private final LockUri.HostAndPort server;
    private final LockOptions options;
    private final Flaw flaw;
    private final String namespace;
    private final ThreadFactory readers;
    private final ScheduledExecutorService pinger;
    private final AtomicLong ids = new AtomicLong();
    private final HolderStamp stamp;
    private volatile Connection connection; // replaced under this
    private volatile boolean closed;

    private MemoryLockBackend(LockUri.HostAndPort server, LockOptions options, Flaw flaw) {
        this.server = server;
        this.options = options;
        this.flaw = flaw;
        this.namespace = options.namespace() == null ? "latchkey" : options.namespace();
        this.stamp = new HolderStamp(options);
        String prefix = "latchkey-memory-" + BACKENDS.incrementAndGet();
        this.readers = DaemonThreads.factory(prefix + "-reader");
        this.pinger = Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory(prefix + "-ping"));
    }

    /** Connects at once, so that a wrong address fails here rather than at the first lock. */
    static MemoryLockBackend connect(LockUri.HostAndPort server, LockOptions options, Flaw flaw) {
        MemoryLockBackend backend = new MemoryLockBackend(server, options, flaw);
        try {
            backend.connection();
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        long period = Math.max(1, options.lease().toMillis() / 3);
        backend.pinger.scheduleAtFixedRate(backend::ping, period, period, TimeUnit.MILLISECONDS);
        return backend;
    }

    /** The server's key of a lock: the namespace and the name, URL-encoded to one protocol word. */
    static String key(String namespace, String lockName) {
        return URLEncoder.encode(namespace + "/" + lockName, StandardCharsets.UTF_8);
    }

    @Override
    public String describe(String lockName) {
        return "memory lock '" + namespace + "/" + lockName + "' on " + server;
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        while (true) {
            try {
                return acquireOnce(lockName, deadline, evidence);
            } catch (LockBackendUnavailableException e) {
                // the server may be restarting: a new connection, while the caller's wait lasts
                if (deadline.hasPassed()) {
                    throw e;
                }
                Thread.sleep(Math.min(RETRY_MILLIS, deadline.remainingMillis()) + 1);
            }
        }
    }

    @Override
    public String describeSemaphore(String name) {
        return "memory semaphore '" + namespace + "/" + name + "' on " + server;
    }

    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        while (true) {
            try {
                return (PermitLease) acquireOnce(name, permits, deadline, evidence);
            } catch (LockBackendUnavailableException e) {
                if (deadline.hasPassed()) {
                    throw e;
                }
                Thread.sleep(Math.min(RETRY_MILLIS, deadline.remainingMillis()) + 1);
            }
        }
    }

    private BackendLease acquireOnce(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return acquireOnce(lockName, 0, deadline, evidence);
    }

    /** One acquire of a lock ({@code permits} 0) or of a permit of a semaphore, on the current connection. */
    private BackendLease acquireOnce(String lockName, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        boolean semaphore = permits > 0;
        String where = semaphore ? describeSemaphore(lockName) : describe(lockName);
        Connection c = connection(lockName, where);
        long id = ids.incrementAndGet();
        CompletableFuture<String[]> answer = c.request(id, (semaphore ? "permit " : "acquire ") + id + " "
                + key(namespace, lockName) + " " + (semaphore ? permits + " " : "") + deadline.remainingMillis()
                + " " + URLEncoder.encode(stamp.forCurrentThread(), StandardCharsets.UTF_8));
        String[] granted;
        Deadline answerBy = deadline.callBound(options.timeout());
        Pauses pauses = Pauses.until(answerBy); // a silence that was this process's own pause is told as such
        try {
            granted = answer.get(answerBy.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            c.pending.remove(id);
            if (flaw != Flaw.ABANDONED_WAITER) {
                c.send("cancel " + id); // withdraws the request, or releases what it was granted meanwhile
            }
            throw e;
        } catch (TimeoutException | ExecutionException e) {
            c.pending.remove(id);
            c.send("cancel " + id);
            throw pauses.explain(unavailableAt(lockName, where, "acquire", e), lockName, where + ": ",
                    semaphore ? "waiting for a permit" : "waiting for the lock", "the memory server");
        }
        if (granted[0].equals("busy")) {
            return null;
        }
        if (granted[0].equals("mismatch")) {
            throw mismatch(lockName, granted[2], permits);
        }
        Held held = semaphore ? new HeldPermit(c, id, lockName, Long.parseLong(granted[2]), Integer.parseInt(granted[3]), evidence)
                : new Held(c, id, lockName, Long.parseLong(granted[2]), evidence);
        c.held.put(id, held);
        // the grant lives as long as the session, which the last answered request kept alive
        evidence.confirmed(c.lastAnsweredSentAt, c.reportedTtl());
        if (c.dead) {
            evidence.lost("the connection to " + server + " closed", null); // it may have closed before put
        }
        return held;
    }

    @Override
    public void close() {
        closed = true;
        pinger.shutdownNow();
        Connection c = connection;
        if (c != null) {
            c.close();
        }
        try {
            pinger.awaitTermination(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One {@code holder} request: the grant's token, the holder session's TTL left, the holder text. */
    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        return grant(request(lockName, "holder", key(namespace, lockName)));
    }

    /**
     * One {@code force} request: the server ends the grant, tells its holder's session at once (which
     * reports the loss, {@link Connection#read}) and grants the next waiter under the next token.
     */
    @Override
    public Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        return grant(request(lockName, "force", key(namespace, lockName)));
    }

    /** One {@code list} request: the server filters, orders and limits the names of the held locks. */
    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        String[] r = request(prefix, "list", key(namespace, prefix) + " " + (after == null ? "-" : key(namespace, after))
                + " " + limit);
        List<String> names = new ArrayList<>();
        for (int i = 2; i < r.length; i++) {
            names.add(URLDecoder.decode(r[i], StandardCharsets.UTF_8).substring(namespace.length() + 1));
        }
        return names;
    }

    /**
     * One {@code slots} request: each held slot's token, its holder session's TTL left and the holder text
     * its {@code permit} request carried; the grant's time is the one in that text.
     */
    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        String[] r = request(name, "slots", key(namespace, name) + " " + permits);
        if (r[0].equals("mismatch")) {
            throw mismatch(name, r[2], permits);
        }
        Map<Integer, GrantRecord> held = new TreeMap<>();
        for (int i = 2; i + 3 < r.length; i += 4) {
            held.put(Integer.parseInt(r[i]), new GrantRecord(r[i + 3].equals("-") ? null
                    : URLDecoder.decode(r[i + 3], StandardCharsets.UTF_8), Long.parseLong(r[i + 1]),
                    Duration.ofMillis(Long.parseLong(r[i + 2])), -1));
        }
        return held;
    }

    private IllegalArgumentException mismatch(String name, String onServer, int asked) {
        return new IllegalArgumentException("semaphore '" + name + "' (" + describeSemaphore(name) + ") has " + onServer
                + " permits on the server, and this call asked for " + asked + ": every holder of a semaphore must use the"
                + " same number of permits");
    }

    private static Optional<GrantRecord> grant(String[] r) {
        return r[2].equals("free") ? Optional.empty() : Optional.of(new GrantRecord(r[4].equals("-") ? null
                : URLDecoder.decode(r[4], StandardCharsets.UTF_8), Long.parseLong(r[2]), Duration.ofMillis(Long.parseLong(r[3])),
                Integer.parseInt(r[5])));
    }

    /** One request {@code what <id> <arguments>} about {@code lockName}, answered within the timeout. */
    private String[] request(String lockName, String what, String arguments) throws InterruptedException {
        Connection c = connection(lockName, describe(lockName));
        long id = ids.incrementAndGet();
        try {
            return c.request(id, what + " " + id + " " + arguments).get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw unavailableAt(lockName, describe(lockName), what + " request", e);
        } finally {
            c.pending.remove(id);
        }
    }

    private void ping() {
        Connection c = connection;
        if (c == null || c.dead) {
            return;
        }
        long id = ids.incrementAndGet();
        long sentAt = System.nanoTime();
        c.request(id, "ping " + id).orTimeout(options.timeout().toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((pong, e) -> {
                    c.pending.remove(id);
                    if (e == null && flaw != Flaw.UNRENEWED) {
                        c.held.values().forEach(h -> h.evidence.confirmed(sentAt, c.reportedTtl()));
                    }
                });
    }

    /** {@link #connection()}, its failure told for {@code lockName} at {@code where}. */
    private Connection connection(String lockName, String where) {
        try {
            return connection();
        } catch (LockBackendUnavailableException e) {
            throw new LockBackendUnavailableException(lockName, where + ": " + e.getMessage(), e);
        }
    }

    private synchronized Connection connection() {
        if (closed) {
            throw new IllegalStateException("memory backend for " + server + " is closed");
        }
        if (connection == null || connection.dead) {
            connection = new Connection();
        }
        return connection;
    }

    private LockBackendUnavailableException unavailable(String lockName, String what, Exception cause) {
        return unavailableAt(lockName, describe(lockName), what, cause);
    }

    private LockBackendUnavailableException unavailableAt(String lockName, String where, String what, Exception cause) {
        return new LockBackendUnavailableException(lockName, "memory server " + server + " did not answer the "
                + what + " of " + where + " within " + Durations.format(options.timeout())
                + ": check that it runs and is reachable", cause);
    }

    /** One session with the server: a socket, its reader thread, requests waiting for answers, grants on it. */
    private final class Connection {
        final Socket socket = new Socket();
        final PrintWriter out;
        final Map<Long, Pending> pending = new ConcurrentHashMap<>();
        final Map<Long, Held> held = new ConcurrentHashMap<>();
        final Thread reader;
        final Duration serverTtl;
        volatile boolean dead;
        /**
         * When the latest answered request was sent. The server handles a connection's requests in order
         * and each one extends the session, so the session lives at least its TTL from this moment.
         */
        volatile long lastAnsweredSentAt;

        Connection() {
            lastAnsweredSentAt = System.nanoTime(); // precedes the server's accept, which starts the session
            try {
                socket.connect(new InetSocketAddress(server.host(), server.port()), (int) options.timeout().toMillis());
                socket.setTcpNoDelay(true);
                out = new PrintWriter(new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8), true);
            } catch (IOException e) {
                close();
                throw new LockBackendUnavailableException("", "cannot connect to memory server " + server + " within "
                        + Durations.format(options.timeout()) + ": " + e.getMessage() + "; check that it runs", e);
            }
            reader = readers.newThread(this::read);
            reader.start();
            long id = ids.incrementAndGet();
            try {
                String[] welcome = request(id, "hello " + id + " " + options.lease().toMillis())
                        .get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
                serverTtl = Duration.ofMillis(Long.parseLong(welcome[2]));
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                close();
                throw new LockBackendUnavailableException("", "memory server " + server + " did not greet within "
                        + Durations.format(options.timeout()) + "; check that it runs", e);
            }
        }

        /** What the backend reports as the server's TTL: the truth, but for {@link Flaw#LATE_LOSS}. */
        Duration reportedTtl() {
            return flaw == Flaw.LATE_LOSS ? serverTtl.multipliedBy(3) : serverTtl;
        }

        CompletableFuture<String[]> request(long id, String line) {
            CompletableFuture<String[]> answer = new CompletableFuture<>();
            pending.put(id, new Pending(System.nanoTime(), answer));
            send(line);
            if (dead) {
                answer.completeExceptionally(new IOException("connection to " + server + " closed"));
            }
            return answer;
        }

        synchronized void send(String line) {
            out.println(line); // a write error shows as a closed connection in the reader
        }

        private void read() {
            Exception cause = null;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    String[] parts = line.split(" ");
                    if (parts[0].equals("ended")) {
                        Held ended = held.remove(parseId(parts[1]));
                        if (ended != null) {
                            log.warn("lock '{}': {} ended its grant (a force release)", ended.lockName, server);
                            ended.evidence.lost("memory server " + server + " ended the grant of lock '" + ended.lockName
                                    + "' (a force release by another client)", null);
                        }
                        continue;
                    }
                    Pending answered = parts.length > 1 ? pending.remove(parseId(parts[1])) : null;
                    if (answered != null) {
                        if (answered.sentAt - lastAnsweredSentAt > 0) {
                            lastAnsweredSentAt = answered.sentAt;
                        }
                        answered.answer.complete(parts);
                    }
                }
            } catch (IOException e) {
                cause = e;
            }
            dead = true;
            IOException closedError = new IOException("connection to " + server + " closed", cause);
            pending.values().forEach(p -> p.answer.completeExceptionally(closedError));
            for (Held h : held.values()) {
                log.warn("lock '{}': the connection to {} closed, and the server ends its grants with it", h.lockName, server);
                h.evidence.lost("the connection to memory server " + server + " closed", cause);
            }
        }

        void close() {
            dead = true;
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
            if (reader != null && Thread.currentThread() != reader) {
                try {
                    reader.join(options.timeout().toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private record Pending(long sentAt, CompletableFuture<String[]> answer) {
    }

    private static long parseId(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A permit of a semaphore on one connection: a grant with its slot, released like a lock's. */
    private final class HeldPermit extends Held implements PermitLease {
        final int slot;

        HeldPermit(Connection connection, long id, String name, long token, int slot, LeaseEvidence evidence) {
            super(connection, id, name, token, evidence);
            this.slot = slot;
        }

        @Override
        public int slot() {
            return slot;
        }

        @Override
        String where() {
            return describeSemaphore(lockName);
        }

        @Override
        public boolean recordsSlots() {
            return false; // schedule slots belong to locks
        }
    }

    /** A grant on one connection. */
    private class Held implements BackendLease {
        final Connection connection;
        final long id;
        final String lockName;
        final long token;
        final LeaseEvidence evidence;

        Held(Connection connection, long id, String lockName, long token, LeaseEvidence evidence) {
            this.connection = connection;
            this.id = id;
            this.lockName = lockName;
            this.token = token;
            this.evidence = evidence;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        /** Where the grant lives, for messages. */
        String where() {
            return describe(lockName);
        }

        @Override
        public boolean recordsSlots() {
            return true;
        }

        @Override
        public java.util.Optional<java.time.Instant> lastCompletedSlot() {
            String[] answer = ask("reading the last slot", "slot", key(namespace, lockName));
            return answer[2].equals("-") ? java.util.Optional.empty() : java.util.Optional.of(java.time.Instant.parse(answer[2]));
        }

        @Override
        public void recordCompletedSlot(java.time.Instant slot) {
            String[] answer = ask("recording slot " + slot, "mark", id + " " + key(namespace, lockName) + " " + slot);
            if (answer[0].equals("refused")) {
                throw new io.latchkey.LockLostException(lockName, describe(lockName) + ": the server refused to record slot "
                        + slot + ", this grant no longer holds the lock");
            }
        }

        /** Sends {@code command <new request id> arguments} and waits one round trip for the answer. */
        private String[] ask(String what, String command, String arguments) {
            long rid = ids.incrementAndGet();
            try {
                return connection.request(rid, command + " " + rid + " " + arguments).get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw unavailable(lockName, what, e);
            } catch (ExecutionException | TimeoutException e) {
                connection.pending.remove(rid);
                throw unavailable(lockName, what, e);
            }
        }

        @Override
        public void release() {
            if (connection.held.remove(id) == null || connection.dead) {
                return; // the server ended the session, and this grant with it
            }
            long rid = ids.incrementAndGet();
            try {
                connection.request(rid, "release " + rid + " " + id).get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw unavailableAt(lockName, where(), "release", e);
            } catch (ExecutionException | TimeoutException e) {
                connection.pending.remove(rid);
                if (!connection.dead) {
                    throw unavailableAt(lockName, where(), "release", e);
                }
                // the server closed the session, and its grants with it, before it answered
                log.warn("lock '{}': the connection to {} closed during the release; the server ends its grants with it",
                        lockName, server);
            }
        }
    }
}
