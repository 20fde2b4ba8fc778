package io.latchkey.jdbc;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.jdbc.MariaDbServer;

/** The whole election contract, on the MariaDB server this JVM's MariaDB classes share. */
class MariaDbElectionContractTest extends ElectionContract<MariaDbServer> {

    MariaDbElectionContractTest() {
        super(JdbcRows.MARIADB, MariaDbServer::start);
    }
}
