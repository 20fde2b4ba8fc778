/**
 * Latchkey on PostgreSQL and MariaDB (and MySQL): locks, semaphores and read-write locks as lease rows
 * whose expiry the database computes by its own clock; leader election, multi-locks and scheduled jobs
 * on top of them, as on every backend.
 *
 * <p>The entry point is {@link io.latchkey.jdbc.JdbcLockProvider}: URIs {@code postgresql://},
 * {@code mariadb://} and {@code mysql://} through a HikariCP pool of Latchkey's own, or
 * {@link io.latchkey.jdbc.JdbcLockProvider#client(javax.sql.DataSource, io.latchkey.LockOptions)} on the
 * application's {@code DataSource}.
 *
 * <h2>Decisions</h2>
 * <ul>
 *   <li><b>The database's clock only.</b> Every expiry is {@code now + lease} in the statement that
 *       writes it, and every comparison is with the same statement's {@code now}; no client's clock is
 *       stored or compared. The holder's validity runs from the moment it sent the confirming statement,
 *       which precedes the database's {@code now}.</li>
 *   <li><b>One statement per lock grant, release and renewal tick</b>; semaphores and read-write locks
 *       take one short transaction at READ COMMITTED per grant, serialised on the name's row (see
 *       {@code HolderRows} for why that isolation is enough).</li>
 *   <li><b>Tokens</b> come from the name's row, which stays after release as the counter: the only
 *       thing left of a released name.</li>
 *   <li><b>Waiters</b> are woken by {@code LISTEN}/{@code NOTIFY} on PostgreSQL; on MariaDB and MySQL,
 *       which have no such channel, they poll every {@code pollInterval} (100 ms by default), and on every
 *       database they wake when the holder's row expires. Advisory locks are not used: they are bound to
 *       a session, which a paused holder keeps.</li>
 *   <li><b>Waiters are counted</b> for {@code inspect()} as rows of kind {@code Q} in the holders table,
 *       refreshed while they wait and deleted when they stop: the only write a waiter makes.</li>
 *   <li><b>Connections</b> are taken per statement from the pool, never per lock; renewals share one per
 *       tick; PostgreSQL's listener keeps one for the client's life.</li>
 *   <li><b>Autocommit</b>: what Latchkey writes outside its own short transactions commits as it runs,
 *       also on an application's pool that hands out connections with autocommit off (which would roll
 *       an uncommitted grant back on return, and let another client take a lock still believed held):
 *       such a connection is switched to autocommit for the call and back before it returns to the
 *       pool. PostgreSQL's listener switches its connection likewise, since a {@code LISTEN} takes
 *       effect only when committed.</li>
 *   <li><b>A failed connection</b> (a restart, a cut) makes a call run again on another connection
 *       within its bound: every write is guarded by the grant's owner id, so running it twice grants,
 *       releases or renews nothing twice.</li>
 * </ul>
 */
package io.latchkey.jdbc;
