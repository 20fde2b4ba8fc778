package io.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.memory.InMemoryProvider;
import io.latchkey.spi.LockUri;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The text a {@link Holder} is written as, and the owner option's rules. */
class HolderTest {

    @Test
    @DisplayName("a holder is one line of text and reads back whole, spaces, equals signs and non-ASCII included")
    void roundTrip() {
        Holder h = new Holder("web 1=blue:42 é", Instant.parse("2026-12-05T07:30:00.123Z"), "pool-1 thread=2");
        String text = h.toString();
        assertThat(text).startsWith("owner=web+1%3Dblue%3A42+%C3%A9 started=2026-12-05T07:30:00.123Z thread=")
                .doesNotContain("\n");
        assertThat(Holder.parse(text)).hasValue(h);
        assertThat(Holder.parse(text + " later=field")).as("a field of a later version").hasValue(h);
    }

    @Test
    @DisplayName("text that is not a holder parses to empty")
    void notAHolder() {
        assertThat(Holder.parse(null)).isEmpty();
        assertThat(Holder.parse("report:nightly")).isEmpty();
        assertThat(Holder.parse("owner=a started=yesterday thread=t")).isEmpty();
        assertThat(Holder.parse("owner=a thread=t")).isEmpty();
    }

    @Test
    @DisplayName("a long thread name is cut to 100 characters")
    void longThread() {
        assertThat(new Holder("a", Instant.EPOCH, "t".repeat(300)).thread()).hasSize(100);
    }

    @Test
    @DisplayName("a blank, overlong or multi-line owner is refused in one line naming the value and the rule")
    void badOwners() {
        assertThatThrownBy(() -> LockOptions.builder().owner(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("owner must not be blank: ' '; leave it unset for the default <hostname>:<pid>");
        assertThatThrownBy(() -> LockOptions.builder().owner("x".repeat(201)))
                .hasMessageStartingWith("owner must be at most 200 characters: 'xxxx").hasMessageEndingWith("has 201;"
                        + " it is written with every grant");
        assertThatThrownBy(() -> LockOptions.builder().owner("a\nb"))
                .hasMessage("owner must not hold control characters: 'a?b' has one at index 1; it is written as one"
                        + " line with every grant");
    }

    /** The host's name as the kernel has it, which the default owner starts with. */
    private static String hostName() {
        try {
            return new String(new ProcessBuilder("hostname").start().getInputStream().readAllBytes()).strip();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("owner= in the URI sets the owner; unset, it is <hostname>:<pid>")
    void ownerInUri() {
        assertThat(LockUri.parse("memory://h?owner=billing-7", LockOptions.defaults(), new InMemoryProvider())
                .options().owner()).isEqualTo("billing-7");
        assertThatThrownBy(() -> LockUri.parse("memory://h?owner=%20", LockOptions.defaults(), new InMemoryProvider()))
                .hasMessageStartingWith("owner must not be blank");
        assertThat(LockOptions.defaults().owner()).as("the default, as hostname(1) and the pid")
                .isEqualTo(hostName() + ":" + ProcessHandle.current().pid());
        assertThat(LockOptions.builder().owner("a").build().toBuilder().owner(null).build().owner())
                .isEqualTo(LockOptions.defaults().owner());
    }
}
