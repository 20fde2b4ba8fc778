package io.latchkey.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OptionsUriTest {

    @Test
    void writesEveryOptionIntoTheQuery() {
        LockOptions options = LockOptions.builder().lease(Duration.ofSeconds(6)).timeout(Duration.ofMillis(2500))
                .namespace("tests/a b").backendOption("database", "2").build();

        String uri = OptionsUri.of("redis://localhost:6379", options);

        assertThat(uri).isEqualTo("redis://localhost:6379?lease=6000ms&safetyMargin=600ms&timeout=2500ms"
                + "&namespace=tests%2Fa%20b&database=2");
    }

    @Test
    void putsCredentialsIntoTheUserInfo() {
        LockOptions options = LockOptions.builder().credentials("app", "p@ss:w+rd").build();

        String uri = OptionsUri.of("redis://localhost:6379/0", options);

        assertThat(uri).startsWith("redis://app:p%40ss%3Aw%2Brd@localhost:6379/0?lease=30000ms");
    }
}
