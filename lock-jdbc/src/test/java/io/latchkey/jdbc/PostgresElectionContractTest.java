package io.latchkey.jdbc;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.jdbc.PostgresServer;

/** The whole election contract, on the PostgreSQL server this JVM's PostgreSQL classes share. */
class PostgresElectionContractTest extends ElectionContract<PostgresServer> {

    PostgresElectionContractTest() {
        super(JdbcRows.POSTGRES, PostgresServer::start);
    }
}
