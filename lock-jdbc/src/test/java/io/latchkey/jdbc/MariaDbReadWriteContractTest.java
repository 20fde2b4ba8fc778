package io.latchkey.jdbc;

import io.latchkey.testkit.ReadWriteContract;
import io.latchkey.testkit.jdbc.MariaDbServer;
import java.util.Collection;

/** The whole read-write contract, on the MariaDB server this JVM's MariaDB classes share. */
class MariaDbReadWriteContractTest extends ReadWriteContract<MariaDbServer> {

    MariaDbReadWriteContractTest() {
        super(JdbcRows.MARIADB, MariaDbServer::start);
    }

    /** Of the names used, nothing is held and no holder row is left: only the token counter rows stay. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        JdbcRows.assertNothingHeld(server(), names);
    }
}
