package io.latchkey.jdbc;

import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.jdbc.MariaDbServer;
import java.util.Collection;

/** The whole lock contract, on the MariaDB server this JVM's MariaDB classes share. */
class MariaDbLockContractTest extends LockContract<MariaDbServer> {

    MariaDbLockContractTest() {
        super(JdbcRows.MARIADB, MariaDbServer::start);
    }

    /** Of the names used, nothing is held and no holder row is left: only the token counter rows stay. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        JdbcRows.assertNothingHeld(server(), names);
    }
}
