package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The {@code latchkey} Actuator endpoint on a real Redis: this application's leases, and who holds a name. */
class LatchkeyEndpointTest {

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis", RedisServer::start);

    /** Far beyond the client's event delivery on a loaded machine; never reached when the tests pass. */
    private static final Duration PATIENCE = Duration.ofSeconds(15);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class, LatchkeyEndpointAutoConfiguration.class))
            .withPropertyValues("latchkey.uri=" + REDIS.get().uri(REDIS.get().endpoints()), "latchkey.lease=3s",
                    "latchkey.timeout=1s", "latchkey.owner=endpoint-app");

    @Test
    void listsTheLeasesHeldAndInspectsAName() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=latchkey").run(context -> {
            LatchkeyEndpoint endpoint = context.getBean(LatchkeyEndpoint.class);
            LockClient client = context.getBean(LockClient.class);
            assertThat(endpoint.leases()).containsEntry("backend", "redis").containsEntry("owner", "endpoint-app")
                    .containsEntry("held", List.of());
            String name = "endpoint:" + ProcessHandle.current().pid() + ":" + System.nanoTime();
            try (Lease lease = client.lock(name).lock(Duration.ZERO);
                    SemaphoreLease permit = client.semaphore(name + ":loads", 2).acquire(Duration.ZERO)) {
                await("both grants listed", () -> held(endpoint).size() == 2);
                assertThat(held(endpoint).get(0)).containsEntry("name", name).containsEntry("kind", "lock")
                        .containsEntry("token", lease.fencingToken()).containsEntry("lost", false).containsKey("since");
                assertThat(held(endpoint).get(1)).containsEntry("name", name + ":loads").containsEntry("kind", "permit")
                        .containsEntry("slot", permit.slot()).containsEntry("permits", 2)
                        .containsEntry("token", permit.fencingToken());
                Map<String, Object> seen = endpoint.lock(name);
                assertThat(seen).containsEntry("held", true).containsEntry("owner", "endpoint-app")
                        .containsEntry("token", lease.fencingToken()).containsEntry("waiters", 0)
                        .containsEntry("sinceSource", "BACKEND_AT_GRANT").containsKeys("clientStarted", "thread", "expiresInMillis", "since");
            }
            await("the releases listed", () -> held(endpoint).isEmpty());
            assertThat(endpoint.lock(name)).isEqualTo(Map.of("name", name, "held", false));
            assertThatThrownBy(() -> endpoint.lock("")).isInstanceOf(InvalidEndpointRequestException.class)
                    .hasMessageContaining("lock name must not be empty");
        });
    }

    @Test
    void forceReleaseOnlyWhenEnabled() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=latchkey").run(context ->
                assertThat(context.getBean(LatchkeyEndpoint.class)).isNotInstanceOf(ForceReleasingEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=latchkey", "latchkey.endpoint.force-release=true")
                .run(context -> {
                    ForceReleasingEndpoint endpoint = context.getBean(ForceReleasingEndpoint.class);
                    String name = "endpoint:" + ProcessHandle.current().pid() + ":" + System.nanoTime();
                    try (LockClient other = LockClient.connect(REDIS.get().uri(REDIS.get().endpoints())
                            + "?lease=3s&timeout=1s&owner=other-app")) {
                        Lease lease = other.lock(name).lock(Duration.ZERO);
                        assertThat(endpoint.forceRelease(name)).containsEntry("released", true)
                                .containsEntry("owner", "other-app").containsEntry("token", lease.fencingToken());
                        await("the other application's lease lost", () -> lease.lost().toCompletableFuture().isDone());
                        assertThat(endpoint.forceRelease(name)).isEqualTo(Map.of("name", name, "held", false,
                                "released", false));
                    }
                    assertThatThrownBy(() -> endpoint.forceRelease("")).isInstanceOf(InvalidEndpointRequestException.class);
                });
    }

    @Test
    void notThereUnlessExposed() {
        runner.run(context -> assertThat(context).doesNotHaveBean(LatchkeyEndpoint.class));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> held(LatchkeyEndpoint endpoint) {
        return (List<Map<String, Object>>) endpoint.leases().get("held");
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as(what + " within " + PATIENCE).isNegative();
            Thread.sleep(20);
        }
    }
}
