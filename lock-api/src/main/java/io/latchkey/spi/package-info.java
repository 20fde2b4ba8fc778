/**
 * What a backend implements, and the few helpers it may use. This package and {@code io.latchkey}
 * are the whole of what a backend builds on: nothing in {@code io.latchkey.internal} is an API, and
 * the backends of this repository import nothing from it either.
 *
 * <h2>The parts</h2>
 * <ul>
 *   <li>{@link io.latchkey.spi.LockProviderFactory}: the entry point, found with
 *       {@link java.util.ServiceLoader} through {@code META-INF/services/io.latchkey.spi.LockProviderFactory};
 *       a public class with a public no-argument constructor that does nothing heavy. It names its
 *       URI schemes and backend options and connects.</li>
 *   <li>{@link io.latchkey.spi.LockBackend}: a non-reentrant lock per name, owned by the returned
 *       {@link io.latchkey.spi.BackendLease} rather than by a thread. The shared layer above it adds
 *       reentrancy, admits one acquire per name and client at a time, keeps the validity deadline,
 *       completes {@code lost()}, runs {@code tryLockAsync} and closes everything on shutdown.</li>
 *   <li>{@link io.latchkey.spi.SemaphoreBackend} (optional): a {@code LockBackend} that also hands out
 *       permits of a semaphore, each a {@link io.latchkey.spi.PermitLease} holding one slot, with the
 *       same evidence discipline; without it, {@code LockClient.semaphore} is refused naming the
 *       backend.</li>
 *   <li>{@link io.latchkey.spi.LeaseEvidence}: where the backend reports each confirmation of
 *       ownership, with the send time of the request that got it and the time the server keeps the
 *       lock from then, and where it reports a loss.</li>
 *   <li>Helpers: {@link io.latchkey.spi.Deadline} (the caller's deadline on the monotonic clock),
 *       {@link io.latchkey.spi.DaemonThreads} (threads named {@code latchkey-...}),
 *       {@link io.latchkey.spi.Durations} (parse {@code 1500ms}, print durations as users write them),
 *       {@link io.latchkey.spi.LockUri} (the parsed URI, and {@code LockUri.parse} for a backend's own
 *       URI tests), {@link io.latchkey.spi.LockClients} (a {@code LockClient} on a backend built
 *       from the application's own client object), {@link io.latchkey.spi.Pauses} (on a timeout or
 *       unavailability path: whether this process was paused past the call's bound, and the one
 *       sentence that says so instead of blaming the server) and {@link io.latchkey.spi.Startup} (how
 *       connect charges the server only for its own time: a probe with the JDK's sockets within
 *       {@code timeout}, then the client library within the rest, plus a stated start-up allowance
 *       while it has never connected in this JVM).</li>
 * </ul>
 *
 * <h2>Writing a backend</h2>
 *
 * <p>The smallest honest backend keeps its locks on a server that expires a silent holder's lock
 * after a TTL and hands out increasing tokens. Its acquire tries, reports the grant, and waits for a
 * change until the deadline; its lease renews at a third of the TTL and reports every answer:
 *
 * <pre>{@code
 * public BackendLease acquire(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
 *     long owner = owners.incrementAndGet();
 *     while (true) {
 *         long sentAt = System.nanoTime();                 // before the request: it precedes the server's renewal
 *         long token = server.tryGrant(name, owner, ttl);  // a round trip bounded by the timeout option
 *         if (token >= 0) {
 *             evidence.confirmed(sentAt, ttl);              // the shared layer's validity deadline starts here
 *             return new Held(name, owner, token, evidence); // renews every ttl / 3, reports confirmed() or lost()
 *         }
 *         if (deadline.hasPassed()) {
 *             return null;                                  // still held by someone else: empty for the caller
 *         }
 *         server.awaitRelease(name, deadline.remaining()); // a watch, not a poll, where the server has one
 *     }
 * }
 * }</pre>
 *
 * <p>What the contract will check of it, and how to run the contract from the backend's own build,
 * is in {@code docs/contract.md} of the Latchkey repository and in the {@code io.latchkey.testkit}
 * package of {@code lock-testkit}. The points that take care:
 * <ul>
 *   <li>Take {@code sentAt} before the request whose answer confirms ownership, never after: the
 *       server's renewal happened at some moment after it, so the deadline computed from it is never
 *       late (contract rule 7).</li>
 *   <li>Silence is not loss: when a renewal gets no answer, report nothing and let the deadline run
 *       out. Report {@code lost} when the server says the lock is gone or may be.</li>
 *   <li>Bound every round trip by {@link io.latchkey.LockOptions#timeout()}, and an acquire by its
 *       deadline plus that timeout; an unreachable server is a
 *       {@link io.latchkey.LockBackendUnavailableException}, never {@code null} (contract rule 2).</li>
 *   <li>The token must outlive the server's cleanup of a released lock: a counter that restarts when
 *       an unused key or node is deleted breaks contract rule 8.</li>
 *   <li>Start threads from {@link io.latchkey.spi.DaemonThreads} with names starting
 *       {@code latchkey-}, bounded in number, and stop them all in {@link io.latchkey.spi.LockBackend#close()}
 *       (contract rule 10).</li>
 * </ul>
 */
package io.latchkey.spi;
