package io.latchkey.example.memory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A tiny lock server with a line protocol, the server a third-party backend would talk to. It runs
 * in its own process ({@link #main}), so that the kit's faults are real: a killed client's connection
 * closes, a paused or cut client goes silent, a restart forgets every lock.
 *
 * <p>Protocol, one request per line, names URL-encoded, every answer carrying the request's id:
 * <pre>
 * hello &lt;id&gt; &lt;ttlMillis&gt;              -&gt; welcome &lt;id&gt; &lt;ttlMillis&gt;   (the session's TTL, as the server keeps it)
 * acquire &lt;id&gt; &lt;name&gt; &lt;waitMillis&gt; [&lt;holder&gt;]
 *                                     -&gt; granted &lt;id&gt; &lt;token&gt; | busy &lt;id&gt;   (holder: URL-encoded text kept with the grant)
 * permit &lt;id&gt; &lt;name&gt; &lt;permits&gt; &lt;waitMillis&gt; [&lt;holder&gt;]
 *                                     -&gt; granted &lt;id&gt; &lt;token&gt; &lt;slot&gt; | busy &lt;id&gt; | mismatch &lt;id&gt; &lt;permits&gt;
 * cancel &lt;id&gt;                         (withdraws a waiting acquire, or releases it if granted; no answer)
 * release &lt;id&gt; &lt;acquireId&gt;            -&gt; released &lt;id&gt;
 * ping &lt;id&gt;                           -&gt; pong &lt;id&gt;
 * inspect &lt;id&gt; &lt;name&gt;                  -&gt; state &lt;id&gt; absent|present
 * holder &lt;id&gt; &lt;name&gt;                   -&gt; holder &lt;id&gt; free | holder &lt;id&gt; &lt;token&gt; &lt;ttlLeftMillis&gt; &lt;holder&gt;|- &lt;waiters&gt;
 * force &lt;id&gt; &lt;name&gt;                    -&gt; as holder, for the grant it ended; its holder is told
 *                                        ended &lt;acquireId&gt;, and the next waiter is granted
 * list &lt;id&gt; &lt;prefix&gt; &lt;after&gt;|- &lt;limit&gt;   -&gt; names &lt;id&gt; [&lt;name&gt; ...]   (held locks, in order)
 * slots &lt;id&gt; &lt;name&gt; &lt;permits&gt;           -&gt; slots &lt;id&gt; [&lt;slot&gt; &lt;token&gt; &lt;ttlLeftMillis&gt; &lt;holder&gt;|- ...]
 *                                        (a semaphore's held slots) | mismatch &lt;id&gt; &lt;permits&gt;
 * </pre>
 *
 * <p>Semaphores live in a table of their own, so that a semaphore and a lock of one name are
 * independent: each has its number of permits, a holder per slot and waiters in arrival order; a
 * request with another number of permits than the semaphore's is answered {@code mismatch} with the
 * semaphore's number, and the state goes once no slot is held and nobody waits. {@code cancel} and
 * {@code release} take the id of a {@code permit} request as they take an {@code acquire}'s.
 *
 * <p>A connection is a session, kept alive by whatever it sends; a session silent for its TTL is
 * closed, and with it go its grants and waiting requests, as they do when the connection closes.
 * Waiters are granted in arrival order. Tokens come from one counter for all locks, written to the
 * data folder on every grant, so they keep increasing across the removal of a free lock's state and
 * across restarts. Because a restart forgets who held what, a restarted server grants nothing for the
 * longest TTL it ever gave: every lease from before the restart has run out by then.
 *
 * <p>Thread-safe: one thread per connection and a reaper, all state guarded by the server's monitor.
 */
public final class MemoryLockServer implements AutoCloseable {

    /** How often the reaper expires sessions and waits; well below any TTL a test uses. */
    private static final long TICK_MILLIS = 10;

    private final ServerSocket listener;
    private final Path state;
    private final Flaw flaw;
    private final Map<String, Entry> locks = new HashMap<>();
    private final Map<String, Semaphore> semaphores = new HashMap<>();
    /** The last completed schedule slot per lock key; kept in memory only, so a restart forgets it. */
    private final Map<String, String> slots = new HashMap<>();
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private final long graceUntil;
    private long lastToken;
    private long maxTtlNanos;
    private volatile boolean closed;

    private static final class Entry {
        Grant holder;
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
        long tokens; // the per-lock counter of Flaw.TOKEN_RESET only
    }

    /** A grant; {@code holder} the text its request carried ({@code -} if none), as received. */
    private record Grant(Session session, long id, long token, String holder) {
    }

    private final class Semaphore {
        final int permits;
        final Grant[] slots;
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

        Semaphore(int permits) {
            this.permits = permits;
            // Flaw.EXTRA_PERMIT: one slot more than the semaphore has
            this.slots = new Grant[flaw == Flaw.EXTRA_PERMIT ? permits + 1 : permits];
        }

        boolean idle() {
            for (Grant g : slots) {
                if (g != null) {
                    return false;
                }
            }
            return waiters.isEmpty();
        }
    }

    private record Waiter(Session session, long id, long deadline, String holder) {
    }

    private final class Session {
        final Socket socket;
        final PrintWriter out;
        volatile long lastSeen = System.nanoTime();
        long ttlNanos; // guarded by the server
        /**
         * Set, under the server's monitor, when the session ends. Its thread may still hold lines it read
         * before (in its reader's buffer, or waiting for the monitor while the reaper ended it): they are
         * ignored, or an acquire among them would queue a waiter, and then a grant, that nothing ends.
         */
        boolean ended; // guarded by the server

        Session(Socket socket) throws IOException {
            this.socket = socket;
            this.out = new PrintWriter(new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8), true);
        }
    }

    /**
     * Starts a server on {@code port} of the loopback interface (0: any free port), keeping its token
     * counter in the folder {@code data}.
     */
    public MemoryLockServer(int port, Path data, Flaw flaw) throws IOException {
        this.flaw = flaw;
        Files.createDirectories(data);
        this.state = data.resolve("state");
        if (Files.exists(state)) {
            String[] saved = Files.readString(state).trim().split(" ");
            lastToken = Long.parseLong(saved[0]);
            maxTtlNanos = Long.parseLong(saved[1]);
        }
        graceUntil = System.nanoTime() + maxTtlNanos;
        listener = new ServerSocket();
        listener.setReuseAddress(true); // a restart binds the same port at once
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        daemon("memory-server-accept", this::acceptLoop);
        daemon("memory-server-reaper", this::reapLoop);
    }

    /** Runs a server: {@code port data-folder [--flaw=<name>]}; prints {@code listening <port>} once it listens. */
    public static void main(String[] args) throws Exception {
        Flaw flaw = args.length > 2 ? Flaw.parse(args[2].replaceFirst("^--flaw=", "")) : Flaw.NONE;
        MemoryLockServer server = new MemoryLockServer(Integer.parseInt(args[0]), Path.of(args[1]), flaw);
        System.out.println("listening " + server.port());
        System.out.flush();
        Thread.currentThread().join(); // until the process is killed
    }

    /** The port the server listens on. */
    public int port() {
        return listener.getLocalPort();
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
        sessions.forEach(s -> endSession(s));
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket socket = listener.accept();
                socket.setTcpNoDelay(true);
                Session session = new Session(socket);
                sessions.add(session);
                daemon("memory-server-session", () -> serve(session));
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("accept failed: " + e);
                }
            }
        }
    }

    private void serve(Session session) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(session.socket.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                session.lastSeen = System.nanoTime();
                handle(session, line.split(" "));
            }
        } catch (IOException | RuntimeException e) {
            // the session ends either way
        }
        endSession(session);
    }

    private synchronized void handle(Session s, String[] r) throws IOException {
        if (s.ended) {
            return; // read before the session ended: its client learns of the end from the closed connection
        }
        switch (r[0]) {
            case "hello":
                s.ttlNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(r[2]));
                if (s.ttlNanos > maxTtlNanos) {
                    maxTtlNanos = s.ttlNanos;
                    save();
                }
                s.out.println("welcome " + r[1] + " " + r[2]);
                break;
            case "acquire":
                String name = r[2];
                long wait = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(r[3]));
                Entry e = locks.computeIfAbsent(name, k -> new Entry());
                Waiter w = new Waiter(s, Long.parseLong(r[1]), System.nanoTime() + wait, r.length > 4 ? r[4] : "-");
                e.waiters.addLast(w);
                grantNext(name, e);
                if (wait <= 0 && e.waiters.remove(w)) {
                    s.out.println("busy " + w.id);
                    grantNext(name, e);
                }
                break;
            case "permit":
                String semName = r[2];
                int permits = Integer.parseInt(r[3]);
                long semWait = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(r[4]));
                Semaphore sem = semaphores.computeIfAbsent(semName, k -> new Semaphore(permits));
                if (sem.permits != permits) {
                    s.out.println("mismatch " + r[1] + " " + sem.permits);
                    break;
                }
                Waiter pw = new Waiter(s, Long.parseLong(r[1]), System.nanoTime() + semWait, r.length > 5 ? r[5] : "-");
                sem.waiters.addLast(pw);
                grantPermits(semName, sem);
                if (semWait <= 0 && sem.waiters.remove(pw)) {
                    s.out.println("busy " + pw.id);
                    grantPermits(semName, sem);
                }
                break;
            case "cancel":
                long id = Long.parseLong(r[1]);
                locks.forEach((n, entry) -> entry.waiters.removeIf(q -> q.session == s && q.id == id));
                semaphores.forEach((n, sem2) -> sem2.waiters.removeIf(q -> q.session == s && q.id == id));
                releaseWhere(g -> g.session == s && g.id == id);
                break;
            case "release":
                long acquireId = Long.parseLong(r[2]);
                releaseWhere(g -> g.session == s && g.id == acquireId);
                s.out.println("released " + r[1]);
                break;
            case "ping":
                s.out.println("pong " + r[1]);
                break;
            case "slot":
                s.out.println("slot " + r[1] + " " + slots.getOrDefault(r[2], "-"));
                break;
            case "mark":
                // fenced: only the grant that holds the lock now may record its slot
                Entry marked = locks.get(r[3]);
                long grantId = Long.parseLong(r[2]);
                if (marked != null && marked.holder != null && marked.holder.session() == s && marked.holder.id() == grantId) {
                    slots.put(r[3], r[4]);
                    s.out.println("marked " + r[1]);
                } else {
                    s.out.println("refused " + r[1]);
                }
                break;
            case "inspect":
                s.out.println("state " + r[1] + (locks.containsKey(r[2]) || semaphores.containsKey(r[2]) ? " present" : " absent"));
                break;
            case "holder":
                // the session's TTL left: how long the server keeps the grant if its holder goes silent
                Entry held = locks.get(r[2]);
                s.out.println(holderLine("holder " + r[1], held));
                break;
            case "force":
                Entry forced = locks.get(r[2]);
                Grant ended = forced == null ? null : forced.holder;
                s.out.println(holderLine("forced " + r[1], forced));
                if (ended != null) {
                    ended.session().out.println("ended " + ended.id());
                    forced.holder = null;
                    grantNext(r[2], forced);
                }
                break;
            case "list":
                String prefix = URLDecoder.decode(r[2], StandardCharsets.UTF_8);
                String after = r[3].equals("-") ? null : URLDecoder.decode(r[3], StandardCharsets.UTF_8);
                StringBuilder names = new StringBuilder("names " + r[1]);
                locks.entrySet().stream().filter(l -> l.getValue().holder != null)
                        .map(l -> URLDecoder.decode(l.getKey(), StandardCharsets.UTF_8))
                        .filter(n -> n.startsWith(prefix) && (after == null || n.compareTo(after) > 0)).sorted()
                        .limit(Integer.parseInt(r[4]))
                        .forEach(n -> names.append(' ').append(URLEncoder.encode(n, StandardCharsets.UTF_8)));
                s.out.println(names);
                break;
            case "slots":
                Semaphore seen = semaphores.get(r[2]);
                if (seen != null && seen.permits != Integer.parseInt(r[3])) {
                    s.out.println("mismatch " + r[1] + " " + seen.permits);
                    break;
                }
                StringBuilder line = new StringBuilder("slots " + r[1]);
                for (int slot = 0; seen != null && slot < seen.slots.length; slot++) {
                    Grant g = seen.slots[slot];
                    if (g != null) {
                        line.append(' ').append(slot).append(' ').append(g.token()).append(' ').append(ttlLeftMillis(g))
                                .append(' ').append(g.holder());
                    }
                }
                s.out.println(line);
                break;
            default:
                s.out.println("error unknown request " + r[0]);
        }
    }

    /**
     * {@code head} and the grant of lock {@code e}: its token, its session's TTL left, its holder text and
     * how many requests wait behind it; or free.
     */
    private static String holderLine(String head, Entry e) {
        Grant g = e == null ? null : e.holder;
        return head + (g == null ? " free" : " " + g.token() + " " + ttlLeftMillis(g) + " " + g.holder() + " "
                + e.waiters.size());
    }

    /** How long the server keeps grant {@code g} if its holder goes silent: its session's TTL left. */
    private static long ttlLeftMillis(Grant g) {
        return TimeUnit.NANOSECONDS.toMillis(Math.max(0, g.session().ttlNanos - (System.nanoTime() - g.session().lastSeen)));
    }

    /** Grants a free lock to the next live waiter; removes the state of a lock nobody holds or wants. */
    private void grantNext(String name, Entry e) throws IOException {
        if (e.holder == null && System.nanoTime() - graceUntil >= 0) {
            Waiter w = flaw == Flaw.OUT_OF_ORDER ? e.waiters.pollLast() : e.waiters.pollFirst();
            if (w != null) {
                long token = flaw == Flaw.TOKEN_RESET ? ++e.tokens : ++lastToken;
                save();
                e.holder = new Grant(w.session, w.id, token, w.holder);
                w.session.out.println("granted " + w.id + " " + token);
            }
        }
        if (e.holder == null && e.waiters.isEmpty() && flaw != Flaw.NO_CLEANUP) {
            locks.remove(name);
        }
    }

    /** Grants free slots to the next live waiters; removes the state of a semaphore nobody holds or wants. */
    private void grantPermits(String name, Semaphore sem) throws IOException {
        if (System.nanoTime() - graceUntil >= 0) {
            for (int slot = 0; slot < sem.slots.length && !sem.waiters.isEmpty(); slot++) {
                if (sem.slots[slot] == null) {
                    Waiter w = sem.waiters.pollFirst();
                    long token = ++lastToken;
                    save();
                    sem.slots[slot] = new Grant(w.session, w.id, token, w.holder);
                    w.session.out.println("granted " + w.id + " " + token + " " + slot);
                }
            }
        }
        if (sem.idle() && flaw != Flaw.NO_CLEANUP) {
            semaphores.remove(name);
        }
    }

    private void releaseWhere(java.util.function.Predicate<Grant> which) throws IOException {
        for (Map.Entry<String, Semaphore> e : List.copyOf(semaphores.entrySet())) {
            Grant[] slots = e.getValue().slots;
            boolean freed = false;
            for (int slot = 0; slot < slots.length; slot++) {
                if (slots[slot] != null && which.test(slots[slot])) {
                    slots[slot] = null;
                    freed = true;
                }
            }
            if (freed) {
                grantPermits(e.getKey(), e.getValue());
            }
        }
        for (Map.Entry<String, Entry> e : List.copyOf(locks.entrySet())) {
            if (e.getValue().holder != null && which.test(e.getValue().holder)) {
                e.getValue().holder = null;
                grantNext(e.getKey(), e.getValue());
            }
        }
    }

    private void endSession(Session s) {
        synchronized (this) {
            if (!sessions.remove(s)) {
                return;
            }
            s.ended = true;
            locks.values().forEach(e -> e.waiters.removeIf(w -> w.session == s));
            semaphores.values().forEach(e -> e.waiters.removeIf(w -> w.session == s));
            try {
                releaseWhere(g -> g.session == s);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        try {
            s.socket.close();
        } catch (IOException e) {
            // gone already
        }
    }

    private void reapLoop() {
        while (!closed) {
            try {
                Thread.sleep(TICK_MILLIS); // the reaper's tick, not a synchronisation
                reap();
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                System.err.println("reaper: " + e);
            }
        }
    }

    private void reap() throws IOException {
        long now = System.nanoTime();
        for (Session s : sessions) {
            long ttl;
            synchronized (this) {
                ttl = s.ttlNanos;
            }
            if (ttl > 0 && now - s.lastSeen > ttl) {
                endSession(s);
            }
        }
        synchronized (this) {
            for (Map.Entry<String, Entry> e : List.copyOf(locks.entrySet())) {
                e.getValue().waiters.removeIf(w -> {
                    if (now - w.deadline < 0) {
                        return false;
                    }
                    w.session.out.println("busy " + w.id);
                    return true;
                });
                grantNext(e.getKey(), e.getValue());
            }
            for (Map.Entry<String, Semaphore> e : List.copyOf(semaphores.entrySet())) {
                e.getValue().waiters.removeIf(w -> {
                    if (now - w.deadline < 0) {
                        return false;
                    }
                    w.session.out.println("busy " + w.id);
                    return true;
                });
                grantPermits(e.getKey(), e.getValue());
            }
        }
    }

    private void save() throws IOException {
        Path tmp = state.resolveSibling("state.tmp");
        Files.writeString(tmp, lastToken + " " + maxTtlNanos);
        Files.move(tmp, state, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }
}
