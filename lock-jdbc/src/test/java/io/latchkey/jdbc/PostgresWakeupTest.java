package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On PostgreSQL a release wakes the waiters of other clients through {@code LISTEN}/{@code NOTIFY}, long
 * before their own poll, also a waiter on an application's pool whose connections come with autocommit
 * off; and a waiter whose listening connection the server ended is woken by its own
 * poll instead, within {@code pollInterval}. A closed client gives its listening connection back to an
 * application's pool listening no more. The poll interval here is long (a fifth of the lease), so
 * that a hand-over within a tenth of it can only be the notification's.
 */
class PostgresWakeupTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> SERVER = SharedServer.of(JdbcRows.POSTGRES, PostgresServer::start);

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration POLL = LEASE.dividedBy(5);

    private static LockClient client() {
        PostgresServer server = SERVER.get();
        return LockClient.connect(URI.create(server.uri(server.endpoints())), LockOptions.builder().lease(LEASE)
                .backendOption(JdbcLockProvider.POLL_INTERVAL, POLL.toMillis() + "ms").build());
    }

    /**
     * Releases {@code held} and returns how long {@code waiting} took to get the lock after it, with a higher token;
     * the lease it got is released.
     */
    private static Duration handOver(Lease held, CompletableFuture<Optional<Lease>> waiting) throws Exception {
        long released = System.nanoTime();
        held.close();
        try (Lease next = waiting.get(LEASE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
            assertThat(next.fencingToken()).as("the next holder's token").isGreaterThan(held.fencingToken());
            return Duration.ofNanos(System.nanoTime() - released);
        }
    }

    @Test
    void aReleaseWakesAWaiterOfAnotherClientAtOnce() throws Exception {
        try (LockClient holder = client(); LockClient waiter = client()) {
            Lease held = holder.lock("woken").tryLock(Duration.ZERO).orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = waiting(waiter, "woken");
            awaitWaiter(holder, "woken");
            assertThat(handOver(held, waiting)).as("hand-over to another client's waiter, polling every %s", POLL)
                    .isLessThan(POLL.dividedBy(10));
        }
    }

    @Test
    void aWaiterWhoseListeningConnectionEndedIsWokenByItsOwnPoll() throws Exception {
        PostgresServer server = SERVER.get();
        try (LockClient holder = client(); LockClient waiter = client()) {
            Lease held = holder.lock("unheard").tryLock(Duration.ZERO).orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = waiting(waiter, "unheard");
            awaitWaiter(holder, "unheard");
            // every listening connection of the database ends: the notification of the release is lost
            assertThat(server.sql("select count(pg_terminate_backend(pid)) from pg_stat_activity where query like 'LISTEN %'"))
                    .isNotEqualTo("0");
            assertThat(handOver(held, waiting)).as("hand-over without a notification, polling every %s", POLL)
                    .isLessThan(POLL.plus(POLL.dividedBy(2)));
        }
    }

    @Test
    void aReleaseWakesAWaiterOnAnApplicationPoolWithAutocommitOffAtOnce() throws Exception {
        PostgresServer server = SERVER.get();
        LockOptions options = LockOptions.builder().lease(LEASE)
                .backendOption(JdbcLockProvider.POLL_INTERVAL, POLL.toMillis() + "ms").build();
        try (LockClient holder = client(); HikariDataSource pool = AutoCommitOffPoolTest.pool(server);
                LockClient waiter = JdbcLockProvider.client(pool, options)) {
            Lease held = holder.lock("woken-off").tryLock(Duration.ZERO).orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = waiting(waiter, "woken-off");
            awaitWaiter(holder, "woken-off");
            assertThat(handOver(held, waiting)).as("hand-over to a waiter on a pool with autocommit off, polling every %s", POLL)
                    .isLessThan(POLL.dividedBy(10));
            // a LISTEN in a transaction never committed is never heard, and keeps the connection in it
            assertThat(server.sql("select state from pg_stat_activity where application_name = '"
                    + pool.getPoolName() + "' and query like 'LISTEN %'"))
                    .as("the state of the waiter's listening connection").isEqualTo("idle");
        }
    }

    @Test
    void aClosedClientGivesItsListeningConnectionBackToTheApplicationsPoolListeningNoMore() throws Exception {
        PostgresServer server = SERVER.get();
        LockOptions options = LockOptions.builder().lease(LEASE)
                .backendOption(JdbcLockProvider.POLL_INTERVAL, POLL.toMillis() + "ms").build();
        // two connections, the listener's and the calls': both are borrowed below, so the one that listened is
        // among them; with autocommit off, an UNLISTEN left in a transaction would be rolled back on return
        try (HikariDataSource pool = AutoCommitOffPoolTest.pool(server, 2)) {
            try (LockClient client = JdbcLockProvider.client(pool, options)) {
                client.lock("unlistened").tryLock(Duration.ZERO).orElseThrow().close();
                awaitListening(server, pool.getPoolName());
            }
            // a connection still listening would be sent every release of every client, and its driver would
            // keep each notification in memory for as long as the pool keeps the connection: nobody reads them
            List<String> channels = new ArrayList<>();
            try (Connection first = pool.getConnection(); Connection second = pool.getConnection()) {
                channels.addAll(listeningChannels(first));
                channels.addAll(listeningChannels(second));
            }
            assertThat(channels).as("the channels the application's connections listen on after the client closed")
                    .isEmpty();
        }
    }

    @Test
    void aShortLeaseGetsAPollIntervalOfAQuarterOfIt() throws Exception {
        PostgresServer server = SERVER.get();
        // the default of 1s would not be shorter than half this lease; the default becomes a quarter of it
        try (LockClient client = LockClient.connect(server.uri(server.endpoints()) + "?lease=2s&timeout=1s");
                Lease lease = client.lock("short-lease").tryLock(Duration.ZERO).orElseThrow()) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    /** Returns once a connection of the pool named {@code poolName} has run its {@code LISTEN}. */
    private static void awaitListening(PostgresServer server, String poolName) throws InterruptedException {
        long end = System.nanoTime() + LEASE.toNanos();
        while (!server.sql("select count(*) from pg_stat_activity where application_name = '" + poolName
                + "' and query like 'LISTEN %'").equals("1")) {
            assertThat(System.nanoTime() - end).as("a connection of %s listens", poolName).isNegative();
            Thread.sleep(20); // reading pg_stat_activity until the LISTEN shows: there is nothing to wait on
        }
    }

    private static List<String> listeningChannels(Connection c) throws SQLException {
        List<String> channels = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rows = s.executeQuery("SELECT pg_listening_channels()")) {
            while (rows.next()) {
                channels.add(rows.getString(1));
            }
        }
        return channels;
    }

    /** {@code waiter}'s wait for {@code name}, up to the lease, on another thread. */
    private static CompletableFuture<Optional<Lease>> waiting(LockClient waiter, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return waiter.lock(name).tryLock(LEASE);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Returns once {@code name}'s waiter is counted, so that the release comes while it waits: its row is
     * written after it read its wake-up generation, so a release from then on wakes it.
     */
    private static void awaitWaiter(LockClient client, String name) throws InterruptedException {
        long end = System.nanoTime() + LEASE.toNanos();
        while (client.lock(name).inspect().waiters().orElse(0) < 1) {
            assertThat(System.nanoTime() - end).as("the waiter of '%s' is counted", name).isNegative();
            Thread.sleep(20); // reading the table until the waiter's row shows: there is nothing to wait on
        }
    }
}
