package io.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockOptions;
import io.latchkey.memory.InMemoryProvider;
import io.latchkey.spi.LockUri.HostAndPort;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** URI parsing: hosts, paths, credentials, options and the errors for each bad part. */
class UriParserTest {

    final InMemoryProvider provider = new InMemoryProvider();

    LockUri.Parsed parse(String uri) {
        return UriParser.parse(uri, LockOptions.defaults(), provider);
    }

    void rejects(String uri, String message) {
        assertThatThrownBy(() -> parse(uri)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    @DisplayName("several hosts with and without ports, a path and shared options")
    void full() {
        LockUri.Parsed p = parse("memory://zk1:2181,zk2,[::1]:2183/locks/app?lease=3m&safetyMargin=500ms&timeout=2m&namespace=ns");
        assertThat(p.uri().scheme()).isEqualTo("memory");
        assertThat(p.uri().hosts()).containsExactly(new HostAndPort("zk1", 2181), new HostAndPort("zk2", 1), new HostAndPort("::1", 2183));
        assertThat(p.uri().path()).isEqualTo("/locks/app");
        assertThat(p.options().lease()).isEqualTo(Duration.ofMinutes(3));
        assertThat(p.options().safetyMargin()).isEqualTo(Duration.ofMillis(500));
        assertThat(p.options().timeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(p.options().namespace()).isEqualTo("ns");
    }

    @Test
    @DisplayName("credentials move into the options and the password never shows")
    void credentials() {
        LockUri.Parsed p = parse("memory://app:s%40cret@host:1/0?flavour=x");
        assertThat(p.options().username()).isEqualTo("app");
        assertThat(p.options().password()).isEqualTo("s@cret");
        assertThat(p.options().backendOption("flavour", null)).isEqualTo("x");
        assertThat(p.uri().redacted()).isEqualTo("memory://app:****@host:1/0?flavour=x");
        assertThat(p.options().toString()).doesNotContain("s@cret");
    }

    @Test
    @DisplayName("the URI's options override those given in code; the rest of the code options stay")
    void overrides() {
        LockOptions code = LockOptions.builder().lease(Duration.ofSeconds(40)).timeout(Duration.ofSeconds(8)).build();
        LockUri.Parsed p = UriParser.parse("memory://h?lease=10s", code, provider);
        assertThat(p.options().lease()).isEqualTo(Duration.ofSeconds(10));
        assertThat(p.options().timeout()).isEqualTo(Duration.ofSeconds(8));
    }

    @Test
    @DisplayName("an unknown option is refused with the list of known ones")
    void unknownOption() {
        rejects("memory://h?leese=10s",
                "unknown option 'leese' in lock URI 'memory://h?leese=10s'; known options: flavour, lease, namespace, owner, safetyMargin, timeout");
    }

    @Test
    @DisplayName("a bad duration quotes the value and shows the accepted forms")
    void badDuration() {
        rejects("memory://h?lease=15x",
                "bad duration '15x' for option 'lease': write a whole number with a unit, such as 500ms, 15s, 2m or 1h"
                        + " (lock URI 'memory://h?lease=15x')");
    }

    @Test
    @DisplayName("a bad port quotes the host")
    void badPort() {
        rejects("memory://h:99999", "bad port '99999' in host 'h:99999' of lock URI 'memory://h:99999': a port is a number from 1 to 65535");
        rejects("memory://h:abc", "bad port 'abc' in host 'h:abc' of lock URI 'memory://h:abc': a port is a number from 1 to 65535");
    }

    @Test
    @DisplayName("an empty host in a list is refused")
    void emptyHost() {
        rejects("memory://h1,,h2", "empty host in lock URI 'memory://h1,,h2'; list hosts as host1:port,host2:port");
    }

    @Test
    @DisplayName("an IPv6 address without brackets is refused with the way to write it")
    void ipv6() {
        rejects("memory://fe80::1:2181", "malformed host 'fe80::1:2181' in lock URI 'memory://fe80::1:2181': write IPv6 addresses in brackets, like [::1]:2181");
    }

    @Test
    @DisplayName("an option without a value, or given twice, is refused")
    void optionShape() {
        rejects("memory://h?lease", "option 'lease' has no value in lock URI 'memory://h?lease'");
        rejects("memory://h?lease=1s&lease=2s", "option 'lease' is given twice in lock URI 'memory://h?lease=1s&lease=2s'");
    }

    @Test
    @DisplayName("a URI without a host or a scheme is refused")
    void noHostNoScheme() {
        rejects("memory:///path", "lock URI 'memory:///path' names no host; write it as memory://host:port");
        assertThatThrownBy(() -> UriParser.scheme("//host:1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no scheme");
    }

    @Test
    @DisplayName("a malformed URI string is refused with the password hidden")
    void malformed() {
        assertThatThrownBy(() -> parse("memory://u:pw@h 1:2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("malformed lock URI 'memory://u:****@h 1:2': white space or a control character at index 15; percent-encode it");
    }

    @Test
    @DisplayName("a safety margin not shorter than the lease is refused")
    void marginVersusLease() {
        rejects("memory://h?lease=1s&safetyMargin=1s", "safety margin must be shorter than the lease: safetyMargin=1s,"
                + " lease=1s; shorten the margin or lengthen the lease (lock URI 'memory://h?lease=1s&safetyMargin=1s')");
    }

    @Test
    @DisplayName("a lease no longer than timeout plus safetyMargin is refused once, for every backend, in the URI or in code")
    void leaseVersusTimeout() {
        rejects("memory://u:pw@h?lease=3s", "lease=3s for lock URI 'memory://u:****@h?lease=3s' must be longer than"
                + " timeout=5s plus safetyMargin=300ms (5300ms), so that a renewal answered within the timeout still finds"
                + " the lease valid; lengthen the lease or shorten the timeout");
        LockOptions code = LockOptions.builder().lease(Duration.ofSeconds(6)).safetyMargin(Duration.ofSeconds(1)).build();
        assertThatThrownBy(() -> LockClients.checkOptions(provider, code, "the application's client"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease=6s for the application's client must be longer than timeout=5s plus safetyMargin=1s (6s),"
                        + " so that a renewal answered within the timeout still finds the lease valid; lengthen the lease"
                        + " or shorten the timeout");
        assertThat(UriParser.parse("memory://h?lease=3s&timeout=2s", LockOptions.defaults(), provider).options().lease())
                .isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    @DisplayName("a zero or enormous lease is refused in the user's own units, quoting the URI, without overflow")
    void leaseBounds() {
        rejects("memory://h?lease=0s", "lease must be positive: 0s (lock URI 'memory://h?lease=0s')");
        rejects("memory://h?lease=999999999h", "lease must be at most 24h: 999999999h (lock URI 'memory://h?lease=999999999h')");
        rejects("memory://h?timeout=1500m", "timeout must be at most 24h: 25h (lock URI 'memory://h?timeout=1500m')");
    }

    @Test
    @DisplayName("a backend option given in code is checked like one in the URI")
    void backendOptionInCode() {
        LockOptions code = LockOptions.builder().backendOption("leese", "10s").build();
        assertThatThrownBy(() -> UriParser.parse("memory://h", code, provider))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown option 'leese' given in code for lock URI 'memory://h'; known options: flavour,"
                        + " lease, namespace, owner, safetyMargin, timeout");
        assertThat(UriParser.parse("memory://h", LockOptions.builder().backendOption("flavour", "x").build(), provider)
                .options().backendOption("flavour", null)).isEqualTo("x");
    }
}
