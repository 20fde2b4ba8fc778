/**
 * A backend written as one outside this repository would write it, on the published API and SPI
 * only ({@code io.latchkey}, {@code io.latchkey.spi}; never {@code io.latchkey.internal}), with its
 * own small lock server, {@link io.latchkey.example.memory.MemoryLockServer}.
 *
 * <p>Its contract test uses only the published test kit: a {@code LockServer} that runs the server in
 * a child JVM (so the kit's kill, pause, cut and restart faults are real), and a subclass of
 * {@code FairOrderingContract} of a few lines. The same module shows that the kit's tests can fail:
 * each {@link io.latchkey.example.memory.Flaw} breaks one guarantee on purpose, and a test runs the
 * contract test meant to catch it against that variant and expects it to fail.
 *
 * <p>Decisions: the server is a separate process, not a map in the test JVM, because a lock held in
 * the test's own memory cannot be killed with its holder or cut off the network. A connection is a
 * session: the server ends it, with its grants and waiting requests, when it closes or stays silent
 * for the lease; the backend pings at a third of the lease. Tokens come from one counter the server
 * writes to disk, and a restarted server grants nothing for the longest lease it ever gave, since it
 * has forgotten who held what.
 */
package io.latchkey.example.memory;
