package io.latchkey.example.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import io.latchkey.testkit.FairOrderingContract;
import io.latchkey.testkit.LockServer;
import java.time.Duration;
import java.util.Collection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The whole contract, fair ordering included, against the memory server: the test a third-party backend writes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MemoryLockContractTest extends FairOrderingContract {

    private MemoryServerProcess server;

    /** The flaw of the server and the backend; none here, one per subclass in {@link FlawsAreCaughtTest}. */
    Flaw flaw() {
        return Flaw.NONE;
    }

    @BeforeAll
    void start() {
        server = MemoryServerProcess.start(flaw());
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected LockServer server() {
        return server;
    }

    /** A local server answers at once: a shorter lease and timeout keep the suite quick. */
    @Override
    protected LockOptions options() {
        return LockOptions.builder().lease(Duration.ofSeconds(4)).timeout(Duration.ofSeconds(2))
                .backendOption("flaw", flaw().optionValue()).build();
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        for (String name : lockNames) {
            assertThat(server.hasState(MemoryLockBackend.key("latchkey", name))).as("server state of lock '%s'", name).isFalse();
        }
    }
}
