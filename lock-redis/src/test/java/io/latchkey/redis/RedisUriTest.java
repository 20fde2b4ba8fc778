package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The Redis-specific parts of lock URIs: schemes, database, master name and the backend's own options. */
class RedisUriTest {

    private static String yaml(String uri) throws Exception {
        LockUri.Parsed parsed = LockUri.parse(uri, LockOptions.defaults(), new RedisLockProvider());
        return RedisConfigs.build(parsed.uri(), parsed.options()).toYAML();
    }

    @Test
    void a_redis_uri_names_one_server_and_its_database() throws Exception {
        String yaml = yaml("redis://cache.example:6380/2?lease=9s&timeout=3s");
        assertThat(yaml).contains("address: \"redis://cache.example:6380\"").contains("database: 2")
                .contains("lockWatchdogTimeout: 9000").contains("timeout: 3000");
    }

    @Test
    void rediss_keeps_tls_and_the_default_port() throws Exception {
        assertThat(yaml("rediss://cache.example")).contains("address: \"rediss://cache.example:6379\"")
                .contains("database: 0");
    }

    @Test
    void a_sentinel_uri_lists_sentinels_with_their_default_port_and_names_the_master() throws Exception {
        String yaml = yaml("redis-sentinel://s1,s2:26380/mymaster/3");
        assertThat(yaml).contains("redis://s1:26379").contains("redis://s2:26380").contains("masterName: \"mymaster\"")
                .contains("database: 3").contains("readMode: \"MASTER\"");
    }

    @Test
    void replica_acknowledgement_of_grants_is_on_by_default_and_can_be_turned_off() throws Exception {
        assertThat(yaml("redis://h")).contains("checkLockSyncedSlaves: true");
        assertThat(yaml("redis://h?checkLockSyncedSlaves=false")).contains("checkLockSyncedSlaves: false");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "redis://h:6379/abc                      | bad database 'abc'",
        "redis://h:6379/-1                       | bad database '-1'",
        "redis://h1:6379,h2:6379                 | takes one",
        "redis-sentinel://s1:26379               | needs the master name",
        "redis-sentinel://s1:26379/m/1/x         | needs the master name",
        "redis-sentinel://s1/m?natMap=nonsense   | bad entry 'nonsense' in option 'natMap'",
        "redis://h?natMap=10.0.0.1:6379=localhost:1 | applies to redis-sentinel:// and redis-cluster:// only",
        "redis://h?checkLockSyncedSlaves=maybe   | must be true or false",
        "redis://h?readMode=SLAVE                | unknown option 'readMode'",
        "redis://h?sslTruststore=file:/x.p12     | applies to rediss:// and rediss-cluster:// only",
        "rediss://h?sslTruststore=no/such/file.p12 | 'no/such/file.p12', which does not exist",
    })
    void bad_redis_uris_are_refused_before_connecting_with_a_message_naming_the_fault(String uri, String message) {
        assertThatThrownBy(() -> LockClient.connect(uri)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void a_refused_uri_does_not_show_its_password() {
        assertThatThrownBy(() -> LockClient.connect("redis://user:hunter2@h:6379/abc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://user:****@h:6379/abc")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
    }

    @Test
    void the_provider_serves_five_schemes_with_their_default_ports() {
        RedisLockProvider provider = new RedisLockProvider();
        assertThat(provider.schemes()).containsExactlyInAnyOrder("redis", "rediss", "redis-sentinel", "redis-cluster",
                "rediss-cluster");
        assertThat(provider.defaultPort("redis-cluster")).isEqualTo(6379);
        assertThat(provider.defaultPort("rediss-cluster")).isEqualTo(6379);
        assertThat(provider.defaultPort("redis")).isEqualTo(6379);
        assertThat(provider.defaultPort("rediss")).isEqualTo(6379);
        assertThat(provider.defaultPort("redis-sentinel")).isEqualTo(26379);
        assertThat(provider.backendOptions()).containsExactlyInAnyOrder("natMap", "checkLockSyncedSlaves", "sslTruststore");
    }
}
