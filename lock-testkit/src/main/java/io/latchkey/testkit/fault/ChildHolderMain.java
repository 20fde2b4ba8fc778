package io.latchkey.testkit.fault;

import io.latchkey.ElectionListener;
import io.latchkey.Lease;
import io.latchkey.Leadership;
import io.latchkey.LockClient;
import io.latchkey.MultiLease;
import io.latchkey.Revocation;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The main class of a lock holder in a child JVM, driven by {@link ChildHolder} over its standard
 * input and output, one line per command and per answer.
 *
 * <p>Argument: the connection URI, with the options in its query. Commands: {@code acquire <waitMillis>
 * <url-encoded name>}, {@code announced-acquire <waitMillis> <url-encoded name>} (the same, first answering
 * {@code trying} once the call waits for the backend), {@code acquire-permit <waitMillis> <permits> <url-encoded name>} (a permit of a
 * semaphore, then held like a lock's lease), {@code acquire-multi <waitMillis> <url-encoded name>...} (a multi-lock,
 * held like a lease for {@code await-lost} and {@code release}), {@code acquire-read <waitMillis> <url-encoded name>} and
 * {@code acquire-write <waitMillis> <url-encoded name>} (a mode of a read-write lock, held like a lock's lease), {@code check-then-write}, {@code await-lost <millis>}, {@code release},
 * {@code clock} (answers {@code clock <nanoTime>}, so that the parent can place this JVM's clock on its own),
 * {@code contend <seed> <maxHoldMillis> <checkMillis> <waitMillis> <url-encoded name>} and {@code stop-contending}
 * (a loop of acquires on a thread of its own, see {@link Contention}), {@code campaign <url-encoded name>} (a
 * candidacy in the election of that name, closed with the client, answering {@code campaigning} and then
 * printing {@code event elected <term>} and {@code event revoked <term> <reason> <term still valid>} as
 * its listener is told), {@code exit}. Answers are lines that
 * start with {@value #PREFIX}, so that anything else a library prints to standard output is ignored:
 * {@code ready}, {@code acquired <token>} ({@code acquired <token> <slot>} for a permit, {@code acquired <token>,<token>...}
 * for a multi-lock, in its name order), {@code empty}, {@code valid <lost>} or {@code invalid <lost>}
 * followed by {@code write <token>}, {@code lost <true|false>}, {@code released}, {@code error <message>}.
 *
 * <p>{@code check-then-write} is what a holder does before touching the protected resource: it checks
 * its lease, reports the result, and then attempts the write all the same (the parent performs it on
 * its fenced resource), as a holder paused between its check and its write would.
 *
 * <p>Commands are read one at a time; only a {@link Contention} runs beside them, and prints its own
 * {@code event} lines.
 */
public final class ChildHolderMain {

    /** The prefix of every answer line. */
    public static final String PREFIX = "@latchkey-child ";

    private ChildHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        // libraries may print to System.out: keep the protocol channel to ourselves
        System.setOut(System.err);
        LockClient client;
        try {
            client = LockClient.connect(args[0]);
        } catch (RuntimeException e) {
            out.println(PREFIX + "error " + oneLine(e));
            return;
        }
        out.println(PREFIX + "ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Lease lease = null;
        MultiLease multi = null;
        Contention contention = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.trim().split(" ", 3);
            try {
                switch (parts[0]) {
                    case "announced-acquire":
                    case "acquire":
                        String name = URLDecoder.decode(parts[2], StandardCharsets.UTF_8);
                        Duration wait = Duration.ofMillis(Long.parseLong(parts[1]));
                        Optional<Lease> got = parts[0].equals("acquire") ? client.lock(name).tryLock(wait)
                                : announced(out, () -> client.lock(name).tryLock(wait));
                        lease = got.orElse(null);
                        out.println(PREFIX + (lease == null ? "empty" : "acquired " + lease.fencingToken()));
                        break;
                    case "acquire-read":
                    case "acquire-write":
                        io.latchkey.DistributedReadWriteLock rw = client.readWriteLock(
                                URLDecoder.decode(parts[2], StandardCharsets.UTF_8));
                        Optional<Lease> mode = (parts[0].equals("acquire-write") ? rw.writeLock() : rw.readLock())
                                .tryLock(Duration.ofMillis(Long.parseLong(parts[1])));
                        lease = mode.orElse(null);
                        out.println(PREFIX + (lease == null ? "empty" : "acquired " + lease.fencingToken()));
                        break;
                    case "acquire-permit":
                        String[] permitsAndName = parts[2].split(" ", 2);
                        Optional<io.latchkey.SemaphoreLease> permit = client
                                .semaphore(URLDecoder.decode(permitsAndName[1], StandardCharsets.UTF_8),
                                        Integer.parseInt(permitsAndName[0]))
                                .tryAcquire(Duration.ofMillis(Long.parseLong(parts[1])));
                        lease = permit.orElse(null);
                        out.println(PREFIX + permit.map(p -> "acquired " + p.fencingToken() + " " + p.slot()).orElse("empty"));
                        break;
                    case "acquire-multi":
                        List<String> names = Arrays.stream(parts[2].split(" "))
                                .map(n -> URLDecoder.decode(n, StandardCharsets.UTF_8)).toList();
                        Optional<MultiLease> all = client.multiLock(names)
                                .tryLock(Duration.ofMillis(Long.parseLong(parts[1])));
                        multi = all.orElse(null);
                        out.println(PREFIX + all.map(m -> "acquired " + m.leases().stream()
                                .map(l -> Long.toString(l.fencingToken())).collect(Collectors.joining(",")))
                                .orElse("empty"));
                        break;
                    case "check-then-write":
                        boolean valid = lease.isValid();
                        boolean lost = lease.lost().toCompletableFuture().isDone();
                        out.println(PREFIX + (valid ? "valid " : "invalid ") + lost);
                        out.println(PREFIX + "write " + lease.fencingToken());
                        break;
                    case "await-lost":
                        boolean done;
                        try {
                            (multi != null ? multi.lost() : lease.lost()).toCompletableFuture().get(Long.parseLong(parts[1]),
                                    java.util.concurrent.TimeUnit.MILLISECONDS);
                            done = true;
                        } catch (java.util.concurrent.TimeoutException e) {
                            done = false;
                        }
                        out.println(PREFIX + "lost " + done);
                        break;
                    case "release":
                        AutoCloseable held = multi != null ? multi : lease;
                        lease = null;
                        multi = null;
                        held.close();
                        out.println(PREFIX + "released");
                        break;
                    case "campaign":
                        String election = URLDecoder.decode(parts[1], StandardCharsets.UTF_8);
                        client.election(election).campaign(new ElectionListener() {
                            @Override
                            public void elected(Leadership leadership) {
                                out.println(PREFIX + "event elected " + leadership.term());
                            }

                            @Override
                            public void revoked(Leadership leadership, Revocation why) {
                                out.println(PREFIX + "event revoked " + leadership.term() + " " + why + " "
                                        + leadership.isValid());
                            }
                        });
                        out.println(PREFIX + "campaigning");
                        break;
                    case "clock":
                        out.println(PREFIX + "clock " + System.nanoTime());
                        break;
                    case "contend":
                        if (contention != null) {
                            throw new IllegalStateException("already contending");
                        }
                        contention = Contention.start(client, line.trim().split(" ", 6), out);
                        out.println(PREFIX + "contending");
                        break;
                    case "stop-contending":
                        if (contention != null) {
                            contention.stop();
                            contention = null;
                        }
                        out.println(PREFIX + "stopped");
                        break;
                    case "exit":
                        if (contention != null) {
                            contention.stop();
                        }
                        client.close();
                        return;
                    default:
                        out.println(PREFIX + "error unknown command: " + line);
                }
            } catch (Exception e) {
                out.println(PREFIX + "error " + oneLine(e));
            }
        }
        client.close();
    }

    /**
     * Runs {@code call} and answers {@code trying} once this thread waits inside it (for the backend's
     * answer, parked or blocked reading a socket, or between its attempts), or once it returned, whichever
     * is first: a parent that stops this process on reading {@code trying} stops it during the call, after
     * it began.
     */
    private static <T> T announced(PrintStream out, java.util.concurrent.Callable<T> call) throws Exception {
        Thread caller = Thread.currentThread();
        java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
        Thread announcer = new Thread(() -> {
            while (!returned.get()) {
                Thread.State state = caller.getState();
                if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING || readsSocket(caller)) {
                    break;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
            out.println(PREFIX + "trying");
        }, "testkit-child-announcer");
        announcer.setDaemon(true);
        announcer.start();
        try {
            return call.call();
        } finally {
            returned.set(true);
            announcer.join(); // "trying" comes before the call's own answer
        }
    }

    /**
     * Whether {@code thread} blocks reading a socket, as a client that calls its server on the calling thread
     * (a JDBC driver) waits for the answer: the thread is {@code RUNNABLE} in a native poll then.
     */
    private static boolean readsSocket(Thread thread) {
        StackTraceElement[] stack = thread.getStackTrace();
        for (int i = 0; i < Math.min(4, stack.length); i++) {
            String frame = stack[i].getClassName() + "." + stack[i].getMethodName();
            if (frame.equals("sun.nio.ch.Net.poll") || frame.equals("sun.nio.ch.NioSocketImpl.park")
                    || frame.equals("java.net.SocketInputStream.socketRead0")) {
                return true;
            }
        }
        return false;
    }

    private static String oneLine(Throwable e) {
        return (e.getClass().getName() + ": " + e.getMessage()).replace('\n', ' ');
    }
}
