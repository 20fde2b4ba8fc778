package io.latchkey.jdbc;

import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.util.Collection;

/** The whole semaphore contract, on the PostgreSQL server this JVM's PostgreSQL classes share. */
class PostgresSemaphoreContractTest extends SemaphoreContract<PostgresServer> {

    PostgresSemaphoreContractTest() {
        super(JdbcRows.POSTGRES, PostgresServer::start);
    }

    /** Of the names used, nothing is held and no holder row is left: only the token counter rows stay. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        JdbcRows.assertNothingHeld(server(), names);
    }
}
