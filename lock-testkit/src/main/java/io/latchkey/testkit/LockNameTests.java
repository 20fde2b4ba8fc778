package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Rule 9: any non-empty string of at most 255 characters without control characters names a lock on
 * every backend, mapped without collisions; anything else is an IllegalArgumentException naming the rule.
 */
abstract class LockNameTests extends ContractGroup {

    /** Names with the characters backends must map: separators, spaces, escapes, case, Unicode. */
    static final List<String> AWKWARD = List.of(
            "a:b", "a/b", "a b", "a_b", "a.b", "a-b", "a%3Ab", "a%2Fb", "a+b", "a\\b", "A:B", "a:b ", " a:b", "a::b",
            "a//b", "/a/b", "a/b/", ".", "..", "a\u00e9", "ae\u0301", "\u30ed\u30c3\u30af", "\ud83d\udd12",
            "\u0391:\u03b2", "a\u00a0b", "a\u200bb", "a{b}", "{a:b}", "a}b", "a*b", "a[b]", "a'b", "a\"b");

    @Test
    @DisplayName("names with ':', '/', spaces and Unicode reach the same lock from every client")
    void awkwardNamesReachTheSameLock() throws Exception {
        String prefix = name("awkward") + ":";
        LockClient holder = client();
        LockClient other = client();
        for (String suffix : AWKWARD) {
            String name = prefix + suffix;
            Lease lease = hold(holder.lock(name));
            assertThat(lease.lockName()).isEqualTo(name);
            assertThat(other.lock(name).tryLock()).as("another client's tryLock on '%s' while held", name).isEmpty();
            lease.close();
            Optional<Lease> after = other.lock(name).tryLock(tryBound(java.time.Duration.ZERO));
            assertThat(after).as("another client's tryLock on '%s' after release", name).isPresent();
            after.get().close();
        }
    }

    @Test
    @DisplayName("names that differ only in separators, spaces, escapes, case or Unicode form are different locks")
    void namesDifferingOnlyInAwkwardCharactersAreDifferentLocks() throws Exception {
        String prefix = name("distinct") + ":";
        LockClient holder = client();
        LockClient other = client();
        for (String suffix : AWKWARD) {
            track(hold(holder.lock(prefix + suffix)));
        }
        for (String suffix : AWKWARD) {
            assertThat(other.lock(prefix + suffix).tryLock()).as("'%s' while every name is held", prefix + suffix)
                    .isEmpty();
        }
        for (String suffix : List.of("a;b", "a=b", "a?b", "a#b", "a&b", "a(b)", "ab", "a\u00c9", "a\u0435")) {
            Optional<Lease> free = other.lock(prefix + suffix).tryLock(tryBound(java.time.Duration.ZERO));
            assertThat(free).as("'%s', never held, next to the held ones", prefix + suffix).isPresent();
            free.get().close();
        }
    }

    @Test
    @DisplayName("a 255-character name is one lock, different from its 254-character prefix")
    void longestNameIsALock() throws Exception {
        String base = name("long");
        String longest = base + "x".repeat(255 - base.length());
        String shorter = longest.substring(0, 254);
        LockClient holder = client();
        LockClient other = client();

        Lease lease = hold(holder.lock(longest));

        assertThat(other.lock(longest).tryLock()).as("the 255-character name while held").isEmpty();
        Optional<Lease> prefix = other.lock(shorter).tryLock(tryBound(java.time.Duration.ZERO));
        assertThat(prefix).as("its 254-character prefix").isPresent();
        track(prefix.get());
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    @DisplayName("255 characters outside the Basic Multilingual Plane are a valid name")
    void longestSupplementaryNameIsALock() throws Exception {
        String longest = "\ud83d\udd12".repeat(250) + String.format("%05x", System.nanoTime() & 0xfffffL);
        String name = longest.substring(0, longest.offsetByCodePoints(0, 255));

        Lease lease = hold(client().lock(name));

        assertThat(client().lock(name).tryLock()).isEmpty();
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    @DisplayName("a 256-character name is an IllegalArgumentException that names the limit")
    void tooLongNameIsRejected() {
        LockClient client = client();

        assertThatThrownBy(() -> client.lock("n".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255");
    }

    @Test
    @DisplayName("an empty name is an IllegalArgumentException that names the rule")
    void emptyNameIsRejected() {
        LockClient client = client();

        assertThatThrownBy(() -> client.lock("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
    }

    @ParameterizedTest(name = "control character U+{0}")
    @ValueSource(strings = {"0000", "0009", "000A", "000D", "001B", "007F", "0085"})
    @DisplayName("a name with a control character is an IllegalArgumentException that names the rule")
    void controlCharactersAreRejected(String hex) {
        LockClient client = client();
        String name = "job" + (char) Integer.parseInt(hex, 16) + "x";

        assertThatThrownBy(() -> client.lock(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control");
    }
}
