/**
 * The Latchkey test kit: the contract every backend passes (docs/contract.md), run against real
 * servers in Testcontainers, with real faults and a history checker.
 *
 * <h2>Running the contract against a backend</h2>
 *
 * <p>The same steps serve the four backends of this repository and a backend written elsewhere:
 *
 * <ol>
 *   <li>Add {@code io.latchkey:lock-testkit} to the backend's build in test scope (it brings JUnit 5,
 *       Testcontainers, AssertJ and Awaitility), and an SLF4J binding for the test run.</li>
 *   <li>Supply a {@link io.latchkey.testkit.LockServer}: the running server, its endpoints on
 *       localhost, the connection URI for a list of endpoints, a restart, and a close. A container
 *       fixture builds its image from a Dockerfile on
 *       {@link io.latchkey.testkit.ServerImages#baseImage()}, publishes dynamic ports, waits
 *       explicitly for readiness, and calls
 *       {@link io.latchkey.testkit.ServerImages#requireDocker()} before it starts, so that without a
 *       Docker engine it fails at once with one clear message; a server that is not a container
 *       needs no Docker.</li>
 *   <li>Subclass {@link io.latchkey.testkit.LockContract} (or
 *       {@link io.latchkey.testkit.FairOrderingContract} if waiters are granted in arrival order) and
 *       pass its constructor how to start the server. The kit starts it before the first test, gives
 *       it to every group and to the hooks through {@code server()}, and closes it. With a key, test
 *       classes of one JVM share one server (the first starts it, JUnit's root store closes it after
 *       the last test; {@link io.latchkey.testkit.SharedServer} gives it to a backend's other test
 *       classes); without one, the class has a server of its own:
 * <pre>{@code
 * class MyLockContractTest extends LockContract<MyServer> {
 *
 *     MyLockContractTest() {
 *         super("my-server", MyServer::start);
 *     }
 *
 *     @Override
 *     protected void assertNothingLeftInBackend(Collection<String> lockNames) {
 *         lockNames.forEach(name -> assertThat(server().keysOf(name)).isEmpty());
 *     }
 * }
 * }</pre>
 *   </li>
 *   <li>If the backend offers semaphores ({@link io.latchkey.spi.SemaphoreBackend}), subclass
 *       {@link io.latchkey.testkit.SemaphoreContract} too, in a class of its own, the same way and with
 *       the same hooks; its {@code assertNothingLeftInBackend} receives semaphore names.</li>
 *   <li>For a cluster, subclass {@link io.latchkey.testkit.ClusterFailoverContract} (or
 *       {@link io.latchkey.testkit.LinearizableFailoverContract} if the lock is replicated by
 *       consensus) the same way, with {@code failLeader()} and {@code failoverTime()}; its cluster is
 *       always its own, since a failover leaves it changed.</li>
 *   <li>Override further hooks only where the defaults do not fit: {@code options()} (the lease the
 *       suite runs with, 6 s by default), {@code newCuttableClient()} and {@code newCuttableChild()} if
 *       the backend's clients do not stay on the addresses they were given, {@code childUri()} and {@code childJvmOptions()} if
 *       a child JVM needs more than the URI of the direct endpoints with the options in its query, {@code slack()},
 *       {@code isLibraryThread(Thread)} and {@code assertNothingLeftInBackend(Collection)} for what
 *       rule 10 checks.</li>
 *   <li>Run it with the test class path holding the backend's provider
 *       ({@code META-INF/services/io.latchkey.spi.LockProviderFactory}): the kill and pause faults
 *       launch child JVMs on {@code java.class.path}, and the pause fault needs a POSIX
 *       {@code kill} command.</li>
 * </ol>
 *
 * <p>Optional capabilities are sub-contracts ({@link io.latchkey.testkit.FairOrderingContract}),
 * never disabled tests: a backend claims a capability by subclassing its contract. Semaphores are one
 * such capability ({@link io.latchkey.testkit.SemaphoreContract}).
 *
 * <h2>What is inside</h2>
 *
 * <ul>
 *   <li>{@code io.latchkey.testkit}: the contract, its hooks and its groups, one per rule.</li>
 *   <li>{@code io.latchkey.testkit.fault}: the faults: a TCP proxy that cuts traffic without a
 *       reset, a lock holder in a child JVM that can be killed or paused, signals.</li>
 *   <li>{@code io.latchkey.testkit.history}: the record of grants, validity checks, writes and
 *       releases on one clock, a fenced resource (and one fenced per permit slot), and the checker of the
 *       contract's safety rules, which also counts a semaphore's valid leases against its permits.</li>
 *   <li>{@code io.latchkey.testkit.<backend>}: the server fixtures of this repository's backends.</li>
 * </ul>
 */
package io.latchkey.testkit;
