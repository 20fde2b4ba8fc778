package io.latchkey.jdbc;

import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.jdbc.MariaDbServer;
import java.util.Collection;

/** The whole semaphore contract, on the MariaDB server this JVM's MariaDB classes share. */
class MariaDbSemaphoreContractTest extends SemaphoreContract<MariaDbServer> {

    MariaDbSemaphoreContractTest() {
        super(JdbcRows.MARIADB, MariaDbServer::start);
    }

    /** Of the names used, nothing is held and no holder row is left: only the token counter rows stay. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        JdbcRows.assertNothingHeld(server(), names);
    }
}
