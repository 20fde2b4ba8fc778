package io.latchkey.jdbc;

import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.util.Collection;

/** The whole lock contract, on the PostgreSQL server this JVM's PostgreSQL classes share. */
class PostgresLockContractTest extends LockContract<PostgresServer> {

    PostgresLockContractTest() {
        super(JdbcRows.POSTGRES, PostgresServer::start);
    }

    /** Of the names used, nothing is held and no holder row is left: only the token counter rows stay. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        JdbcRows.assertNothingHeld(server(), names);
    }
}
