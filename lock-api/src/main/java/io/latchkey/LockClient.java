package io.latchkey;

import io.latchkey.internal.Connector;
import java.net.URI;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * A connection to one lock backend, from which named {@link DistributedLock distributed locks} are taken.
 *
 * <p>Connect with a URI whose scheme selects the backend; the backend is the one Latchkey artifact on
 * the class path ({@code lock-redis}, {@code lock-zookeeper}, {@code lock-etcd} or {@code lock-kafka}):
 *
 * <pre>{@code
 * try (LockClient client = LockClient.connect("redis://localhost:6379?lease=15s")) {
 *     DistributedLock lock = client.lock("report:nightly");
 *     Optional<Lease> maybe = lock.tryLock(Duration.ofSeconds(5));   // empty: someone else holds it
 *     if (maybe.isPresent()) {
 *         try (Lease lease = maybe.get()) {
 *             lease.ensureValid();                   // throws LockLostException if the lock is gone
 *             writeReport(lease.fencingToken());     // let the resource reject stale writers
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>The URI is {@code scheme://[user[:password]@]host[:port][,host[:port]...][/path][?option=value&...]}.
 * Options shared by every backend are {@code lease} (how long a silent holder keeps the lock, which is
 * also the failover bound), {@code safetyMargin}, {@code timeout} (the bound on one backend round trip)
 * and {@code namespace}; durations are written {@code 500ms}, {@code 15s}, {@code 2m} or {@code 1h}.
 * Each backend documents its own further options; an unknown option is an error, never ignored.
 *
 * <p>Thread-safety: a client is thread-safe and meant to be shared; create one per backend
 * connection. {@link #close()} releases every lease it still holds, then disconnects.
 *
 * <p>Discovery: providers are found with {@link java.util.ServiceLoader} over
 * {@link io.latchkey.spi.LockProviderFactory}. Exactly one provider must serve the URI's scheme; none,
 * or several, is an error that says what to do (the system property {@code latchkey.provider} names
 * the provider class to use when several are present). There is never a silent fallback.
 */
public interface LockClient extends AutoCloseable {

    /**
     * Connects to the backend named by {@code uri}, with default options plus those in the URI's query.
     *
     * @throws IllegalArgumentException if the URI is malformed, names an unknown option or a bad value
     * @throws LockException if no provider, or several, serve the URI's scheme, or the backend cannot be reached
     */
    static LockClient connect(String uri) {
        return Connector.connect(uri, LockOptions.defaults());
    }

    /**
     * Connects to the backend named by {@code uri}, starting from {@code options}; options given in the
     * URI's query override those of {@code options}.
     *
     * @throws IllegalArgumentException if the URI is malformed, names an unknown option or a bad value
     * @throws LockException if no provider, or several, serve the URI's scheme, or the backend cannot be reached
     */
    static LockClient connect(URI uri, LockOptions options) {
        return Connector.connect(uri, options);
    }

    /**
     * Checks {@code name} against the rule every lock and semaphore name keeps, without connecting, so
     * that a program can refuse bad input before it reaches for a backend.
     *
     * @return {@code name}
     * @throws IllegalArgumentException if the name is empty, longer than 255 characters or holds a
     *     control character; the message names the rule
     */
    static String checkName(String name) {
        return Connector.checkName(name);
    }

    /**
     * Checks a semaphore's name and number of permits, without connecting.
     *
     * @throws IllegalArgumentException if the name breaks the rule of names or {@code permits} is not
     *     from 1 to 1000; the message names the semaphore and the value
     */
    static void checkSemaphore(String name, int permits) {
        Connector.checkSemaphore(name, permits);
    }

    /**
     * Checks the names of a multi-lock, without connecting: the rule of {@link #multiLock(String...)}.
     *
     * @return the names in the order a multi-lock takes them
     * @throws IllegalArgumentException if there is no name, a name breaks the rule of names, or a name
     *     is given twice; the message names it
     */
    static List<String> checkMultiLock(Collection<String> names) {
        return Connector.checkMultiLock(names);
    }

    /**
     * Returns the lock with this name. Cheap: nothing is sent to the backend until a lease is requested.
     *
     * @param name any non-empty string of at most 255 characters without control characters
     * @throws IllegalArgumentException if the name breaks that rule; the message names the rule
     * @throws IllegalStateException if this client is closed
     */
    DistributedLock lock(String name);

    /**
     * Returns the semaphore with this name and number of permits. Cheap: nothing is sent to the
     * backend until a permit is requested.
     *
     * @param name any non-empty string of at most 255 characters without control characters, as for
     *     {@link #lock}; a semaphore and a lock of the same name are independent
     * @param permits from 1 to 1000, the same for every holder of the name
     * @throws IllegalArgumentException if the name breaks the rule of names, {@code permits} is out of
     *     range, or this client uses the semaphore with another number of permits
     * @throws UnsupportedOperationException if the backend does not offer semaphores; the message names it
     * @throws IllegalStateException if this client is closed
     */
    default DistributedSemaphore semaphore(String name, int permits) {
        throw new UnsupportedOperationException(getClass().getName() + " does not offer semaphores");
    }

    /**
     * Returns the read-write lock with this name: readers share it, a writer excludes everyone; see
     * {@link DistributedReadWriteLock}. Cheap: nothing is sent to the backend until a lease is requested.
     *
     * @param name any non-empty string of at most 255 characters without control characters, as for
     *     {@link #lock}; a read-write lock and a lock or semaphore of the same name are independent
     * @throws IllegalArgumentException if the name breaks the rule of names
     * @throws UnsupportedOperationException if the backend does not offer read-write locks; the message
     *     names it and says why
     * @throws IllegalStateException if this client is closed
     */
    default DistributedReadWriteLock readWriteLock(String name) {
        throw new UnsupportedOperationException(getClass().getName() + " does not offer read-write locks");
    }

    /**
     * Returns the locks of these names, to be taken together: all or none, in one global order, so that
     * holders asking for the same names in different orders never deadlock; see {@link MultiLock}.
     * Cheap: nothing is sent to the backend until a lease is requested.
     *
     * @param names one or more names, each by the rule of {@link #lock} and each once, in any order
     * @throws IllegalArgumentException if there is no name, a name breaks the rule of names, or a name
     *     is given twice; the message names it
     * @throws IllegalStateException if this client is closed
     */
    default MultiLock multiLock(String... names) {
        return multiLock(Arrays.asList(names));
    }

    /** {@link #multiLock(String...)} for names in a collection. */
    default MultiLock multiLock(Collection<String> names) {
        return Connector.multiLock(this, names);
    }

    /**
     * Leader election on {@code name}: candidates that {@link Election#campaign campaign} on it lead one
     * at a time, each for a term that is a grant of the lock {@code name}; see {@link Election}. Cheap:
     * nothing is sent to the backend until a candidate campaigns.
     *
     * @throws IllegalArgumentException if {@code name} breaks the rule of names of {@link #lock}
     * @throws IllegalStateException if this client is closed
     */
    default Election election(String name) {
        return Connector.election(this, name);
    }

    /** The most names {@link #list(String, String, int)} returns at once. */
    int MAX_LIST = 10_000;

    /**
     * The names of the locks held now, by any client, whose names start with {@code prefix}, in
     * {@link String#compareTo} order: a page of at most {@code limit}, those after {@code after} (from the
     * start if it is null); the next page starts after the last name of this one. Semaphores, read-write
     * locks and names nobody holds are not listed. Read-only, as {@link DistributedLock#inspect()}; the
     * cost is the backend's: a key scan of the database and a read per listed name (Redis), a children
     * read and one read per 128 names (ZooKeeper), a keys-only range read of the namespace at one revision
     * (etcd), a group listing and description (Kafka).
     *
     * @param prefix the start of the names; empty for every name
     * @param limit from 1 to {@link #MAX_LIST}
     * @throws IllegalArgumentException if {@code limit} is out of range, or {@code prefix} or {@code after}
     *     has a control character or is longer than a name may be
     * @throws LockBackendUnavailableException if the backend cannot be reached within {@code timeout}
     * @throws UnsupportedOperationException if the backend cannot list its locks
     * @throws IllegalStateException if this client is closed
     * @throws InterruptedException if interrupted while waiting for the backend's answer
     */
    default List<String> list(String prefix, String after, int limit) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list the held locks");
    }

    /** The first {@link #MAX_LIST} names of {@link #list(String, String, int)}. */
    default List<String> list(String prefix) throws InterruptedException {
        return list(prefix, null, MAX_LIST);
    }

    /** The options this client runs with, after the URI's query was applied. */
    LockOptions options();

    /**
     * Adds a listener of this client's lock events, after those of {@link LockOptions#listeners()};
     * see {@link LockListener} for how they are delivered. Adding the same listener twice delivers
     * every event to it twice.
     */
    void addListener(LockListener listener);

    /** Removes one registration of {@code listener}; events already queued may still reach it. */
    void removeListener(LockListener listener);

    /** The short name of the backend, such as {@code redis} or {@code zookeeper}, for logs and metrics. */
    String backendName();

    /**
     * Closes every lease this client still holds (releasing the locks), stops the client's threads and
     * disconnects from the backend, unless the backend connection was supplied by the application.
     * Idempotent.
     *
     * <p>Bounded when the backend cannot be reached: each release waits at most one round trip
     * ({@code timeout}) and the disconnect at most one more, so a client holding one lease returns
     * within about twice {@code timeout}; a lock whose release did not reach the backend expires
     * there within {@code lease}.
     */
    @Override
    void close();
}
