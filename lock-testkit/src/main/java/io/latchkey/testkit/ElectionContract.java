package io.latchkey.testkit;

import java.util.function.Supplier;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The election contract ({@link io.latchkey.Election}), to subclass once per backend beside its
 * {@link LockContract}: one leader at a time among candidates of several clients, each term's number
 * above the last, a resignation handed over within the wake-up, a cut leader told {@code revoked} as
 * its term becomes invalid and before another candidate leads, a leader killed (kill -9) in a child JVM
 * replaced within the lease, a leader paused past the lease told {@code revoked} first on waking, a
 * healthy leader that keeps its term among standbys, {@code leader()} naming the leader's owner right after
 * every change to a client that does not campaign, nothing left running after close, and across a
 * restart of the server never two valid terms and a leader again. Every history of terms is checked by
 * {@link io.latchkey.testkit.history.HistoryChecker#assertConsistent}, a term being the grant of the
 * election's lock.
 *
 * <p>The same shape and hooks as {@link LockContract}; the group only uses the server, so it runs beside
 * the other contracts of the server.
 *
 * @param <S> the kind of server
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class ElectionContract<S extends LockServer> extends ServerContract<S> {

    /** A contract on a server of this class's own, started before the first test and closed after the last. */
    protected ElectionContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /** A contract on the server the test classes of one JVM share under {@code serverKey}, as {@link LockContract}'s. */
    protected ElectionContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    @GroupExecution.Beside
    @Nested
    @Order(1)
    @DisplayName("1. Elections: one leader at a time, higher terms, resignation handed over, a cut, killed or paused"
            + " leader replaced and revoked first, no flapping")
    class Terms extends ElectionTests {
        @Override
        ElectionContract<?> contract() {
            return ElectionContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(2)
    @DisplayName("2. Elections across a server restart: never two valid terms, higher terms, a leader again")
    class Restart extends ElectionRestartTests {
        @Override
        ElectionContract<?> contract() {
            return ElectionContract.this;
        }
    }
}
