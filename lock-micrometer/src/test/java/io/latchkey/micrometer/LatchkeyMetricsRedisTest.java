package io.latchkey.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.latchkey.Candidacy;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.Revocation;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.ServerImages;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.redis.RedisServer;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The binder against a real Redis server, read back from a {@link SimpleMeterRegistry}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LatchkeyMetricsRedisTest {

    static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3)).timeout(Duration.ofSeconds(1)).build();
    /** Events arrive on the client's event thread: a generous bound derived from the lease. */
    static final Duration EVENTS = OPTIONS.lease().plus(OPTIONS.timeout());

    RedisServer server;
    LockClient client;
    LockClient other;
    SimpleMeterRegistry registry;

    @BeforeAll
    void start() {
        ServerImages.requireDocker();
        server = RedisServer.start();
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void connect() {
        URI uri = URI.create(server.uri(server.endpoints()));
        client = LockClient.connect(uri, OPTIONS);
        other = LockClient.connect(uri, OPTIONS);
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void close() {
        client.close();
        other.close();
    }

    long timerCount(String name, String... tags) {
        var timer = registry.find(name).tags(tags).timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void acquireHoldAndHeldGauge() throws Exception {
        LatchkeyMetrics.monitor(client, registry);
        assertThat(registry.get("latchkey.acquire").tags("backend", "redis", "outcome", "acquired").timer().count()).isZero();
        try (Lease lease = client.lock("metrics:a").lock(Duration.ofSeconds(5))) {
            await().atMost(EVENTS).until(() -> timerCount("latchkey.acquire", "outcome", "acquired") == 1);
            assertThat(registry.get("latchkey.leases.held").tags("backend", "redis").gauge().value()).isEqualTo(1.0);
            try (Lease held = other.lock("metrics:b").lock(Duration.ofSeconds(5))) {
                assertThat(client.lock("metrics:b").tryLock(Duration.ofMillis(100))).isEmpty();
                await().atMost(EVENTS).until(() -> timerCount("latchkey.acquire", "outcome", "not_acquired") == 1);
            }
        }
        await().atMost(EVENTS).until(() -> timerCount("latchkey.hold", "backend", "redis") == 1);
        assertThat(registry.get("latchkey.leases.held").gauge().value()).isZero();
        assertThat(registry.get("latchkey.acquire").tags("outcome", "error").timer().count()).isZero();
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("lock")).isNull());
    }

    @Test
    void permitsAreCountedApartFromLocks() throws Exception {
        LatchkeyMetrics.monitor(client, registry);
        assertThat(registry.get("latchkey.permit.acquire").tags("backend", "redis", "outcome", "acquired").timer().count()).isZero();
        try (SemaphoreLease lease = client.semaphore("metrics:pool", 1).acquire(Duration.ofSeconds(5))) {
            await().atMost(EVENTS).until(() -> timerCount("latchkey.permit.acquire", "outcome", "acquired") == 1);
            assertThat(registry.get("latchkey.permit.held").tags("backend", "redis").gauge().value()).isEqualTo(1.0);
            // a semaphore has no local gate: the second permit of one is asked of the server, which denies it
            assertThat(client.semaphore("metrics:pool", 1).tryAcquire(Duration.ofMillis(100))).isEmpty();
            await().atMost(EVENTS).until(() -> timerCount("latchkey.permit.acquire", "outcome", "not_acquired") == 1);
        }
        await().atMost(EVENTS).until(() -> timerCount("latchkey.permit.hold", "backend", "redis") == 1);
        assertThat(registry.get("latchkey.permit.held").gauge().value()).isZero();
        assertThat(timerCount("latchkey.permit.acquire", "outcome", "error")).isZero();
        // events arrive in order: once the release is counted, every earlier event was, and no lock meter moved
        assertThat(timerCount("latchkey.acquire", "outcome", "acquired")).isZero();
        assertThat(timerCount("latchkey.acquire", "outcome", "not_acquired")).isZero();
        assertThat(timerCount("latchkey.hold")).isZero();
        assertThat(registry.get("latchkey.leases.held").gauge().value()).isZero();
    }

    @Test
    void lossByReason() throws Exception {
        LatchkeyMetrics.monitor(client, registry);
        Duration atMost = Duration.ofSeconds(1);
        try (Lease lease = client.lock("metrics:lost").tryLock(
                LockRequest.builder().wait(Duration.ofSeconds(5)).atMost(atMost).build()).orElseThrow()) {
            lease.lost().toCompletableFuture().get(atMost.plus(EVENTS).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            await().atMost(EVENTS).until(() -> registry.find("latchkey.lost").tags("reason", "at_most").counter() != null);
            assertThat(registry.get("latchkey.lost").tags("backend", "redis", "reason", "at_most").counter().count()).isEqualTo(1.0);
        }
        // A lost grant is released too when closed: the gauge returns to zero.
        await().atMost(EVENTS).until(() -> timerCount("latchkey.hold") == 1);
        assertThat(registry.get("latchkey.leases.held").gauge().value()).isZero();
    }

    @Test
    void lockNameTagWhenAskedFor() throws Exception {
        LatchkeyMetrics.builder("redis").lockNameTag(true).tags(Tags.of("app", "reports")).build().register(client, registry);
        try (Lease lease = client.lock("metrics:named").lock(Duration.ofSeconds(5))) {
            await().atMost(EVENTS).until(() -> timerCount("latchkey.acquire", "lock", "metrics:named", "outcome", "acquired") == 1);
            assertThat(registry.get("latchkey.leases.held").tags("lock", "metrics:named", "app", "reports").gauge().value())
                    .isEqualTo(1.0);
        }
        await().atMost(EVENTS).until(() -> timerCount("latchkey.hold", "lock", "metrics:named") == 1);
    }

    double count(String name, String... tags) {
        var counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    /** A candidate's listener that does nothing: the meters are what is looked at. */
    static final ElectionListener QUIET = new ElectionListener() {
        @Override
        public void elected(Leadership leadership) {
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
        }
    };

    @Test
    void electionTermsByReason() throws Exception {
        LatchkeyMetrics.monitor(client, registry);
        assertThat(registry.get("latchkey.election.elected").tags("backend", "redis").counter().count()).isZero();
        for (String reason : new String[] {"lost", "resigned", "closed"}) {
            assertThat(registry.get("latchkey.election.revoked").tags("backend", "redis", "reason", reason).counter().count())
                    .isZero();
        }
        assertThat(registry.get("latchkey.election.leading").tags("backend", "redis").timer().count()).isZero();
        assertThat(registry.get("latchkey.election.leaders").tags("backend", "redis").gauge().value()).isZero();

        Candidacy candidacy = client.election("metrics:election").campaign(QUIET);
        await().atMost(EVENTS).until(() -> count("latchkey.election.elected") == 1);
        assertThat(registry.get("latchkey.election.leaders").gauge().value()).isEqualTo(1.0);
        candidacy.resign(Duration.ZERO); // the only candidate: it campaigns again at once and leads again
        await().atMost(EVENTS).until(() -> count("latchkey.election.elected") == 2);
        candidacy.close();
        await().atMost(EVENTS).until(() -> count("latchkey.election.revoked", "reason", "closed") == 1);

        assertThat(count("latchkey.election.revoked", "backend", "redis", "reason", "resigned")).isEqualTo(1.0);
        assertThat(count("latchkey.election.revoked", "reason", "lost")).isZero();
        // one term led per revocation, each for some time
        var leading = registry.get("latchkey.election.leading").tags("backend", "redis").timer();
        assertThat(leading.count()).isEqualTo(2);
        assertThat(leading.max(TimeUnit.NANOSECONDS)).isPositive();
        assertThat(registry.get("latchkey.election.leaders").gauge().value()).isZero();
        // the election's lock is a lock: two grants, both released once the close's revocation was counted
        await().atMost(EVENTS).until(() -> timerCount("latchkey.hold") == 2);
        assertThat(timerCount("latchkey.acquire", "outcome", "acquired")).isEqualTo(2);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("election")).isNull());
    }

    @Test
    void electionNameTagWhenAskedFor() throws Exception {
        LatchkeyMetrics.builder("redis").lockNameTag(true).build().register(client, registry);
        Candidacy candidacy = client.election("metrics:named-election").campaign(QUIET);
        await().atMost(EVENTS).until(() -> count("latchkey.election.elected", "election", "metrics:named-election") == 1);
        assertThat(registry.get("latchkey.election.leaders").tags("election", "metrics:named-election").gauge().value())
                .isEqualTo(1.0);
        candidacy.close();
        await().atMost(EVENTS).until(() -> count("latchkey.election.revoked", "election", "metrics:named-election",
                "reason", "closed") == 1);
        assertThat(timerCount("latchkey.election.leading", "election", "metrics:named-election")).isEqualTo(1);
        assertThat(registry.get("latchkey.election.leaders").tags("election", "metrics:named-election").gauge().value())
                .isZero();
    }

    @Test
    void acquireTimerCountsErrorsOfABackendThatIsDown() throws Exception {
        // a client whose connection goes through a proxy that is then cut: the server stops answering it
        try (TcpProxy proxy = TcpProxy.start(server.endpoints().get(0));
                LockClient cut = LockClient.connect(URI.create(server.uri(List.of(proxy.endpoint()))), OPTIONS)) {
            LatchkeyMetrics.monitor(cut, registry);
            cut.lock("metrics:down").lock(Duration.ofSeconds(5)).close(); // the connection works before the cut
            await().atMost(EVENTS).until(() -> timerCount("latchkey.acquire", "outcome", "acquired") == 1);
            proxy.cut();

            long start = System.nanoTime();
            assertThatThrownBy(() -> cut.lock("metrics:down").tryLock(Duration.ofMillis(200))).isInstanceOf(LockException.class);
            Duration failedAfter = Duration.ofNanos(System.nanoTime() - start);

            await().atMost(EVENTS).until(() -> timerCount("latchkey.acquire", "outcome", "error") == 1);
            var error = registry.get("latchkey.acquire").tags("backend", "redis", "outcome", "error").timer();
            // the timer records the time from the call to the failure
            assertThat(error.totalTime(TimeUnit.NANOSECONDS)).isPositive().isLessThanOrEqualTo(failedAfter.toNanos());
            assertThat(timerCount("latchkey.acquire", "outcome", "not_acquired")).isZero();
            proxy.restore();
        }
    }
}
