package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule 9: which names are valid, and the message for each that is not. */
class LockNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "job:nightly", "a/b/../c", "with space", "ümlaut-名前-😀", ".", "..", "%41", "*"})
    @DisplayName("any non-empty name without control characters is valid")
    void valid(String name) {
        assertThat(LockNames.validate(name)).isEqualTo(name);
    }

    @Test
    @DisplayName("255 characters are valid, counted in code points, and 256 are not")
    void length() {
        assertThat(LockNames.validate("x".repeat(255))).hasSize(255);
        assertThat(LockNames.validate("😀".repeat(255))).hasSize(510);
        assertThatThrownBy(() -> LockNames.validate("x".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("lock name must be at most 255 characters, got 256: 'xxxxxxxxxx")
                .hasMessageEndingWith("(a lock name is 1 to 255 characters without control characters)");
    }

    @Test
    @DisplayName("an empty name is refused naming the rule")
    void empty() {
        assertThatThrownBy(() -> LockNames.validate(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock name must not be empty (a lock name is 1 to 255 characters without control characters)");
    }

    @Test
    @DisplayName("a control character is refused with its code and position, printed escaped")
    void control() {
        assertThatThrownBy(() -> LockNames.validate("job\nnightly"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock name must not contain control characters: U+000A at index 3 in 'job\\u000Anightly'"
                        + " (a lock name is 1 to 255 characters without control characters)");
        assertThatThrownBy(() -> LockNames.validate("a\u0085")).hasMessageContaining("U+0085");
    }

    @Test
    @DisplayName("an unpaired surrogate is refused: it cannot be encoded as a key")
    void surrogate() {
        assertThatThrownBy(() -> LockNames.validate("a\uD800b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate U+D800 at index 1");
    }
}
