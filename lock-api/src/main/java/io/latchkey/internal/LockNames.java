package io.latchkey.internal;

import java.util.Objects;

/**
 * Rule 9: a lock name is any non-empty string of at most 255 characters (Unicode code points) without
 * control characters. Backends map valid names to their own keys.
 */
final class LockNames {

    public static final int MAX_LENGTH = 255;
    private static final String RULE = "a lock name is 1 to " + MAX_LENGTH + " characters without control characters";

    private LockNames() {
    }

    /** Returns {@code name} if it is valid, otherwise throws an {@link IllegalArgumentException} naming the rule. */
    public static String validate(String name) {
        Objects.requireNonNull(name, "lock name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name must not be empty (" + RULE + ")");
        }
        int length = 0;
        for (int i = 0; i < name.length(); ) {
            char c = name.charAt(i);
            int cp;
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                cp = name.codePointAt(i);
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("lock name must be valid Unicode: unpaired surrogate U+"
                        + hex(c) + " at index " + i + " in '" + printable(name) + "' (" + RULE + ")");
            } else {
                cp = c;
            }
            if (Character.isISOControl(cp)) {
                throw new IllegalArgumentException("lock name must not contain control characters: U+" + hex(cp)
                        + " at index " + i + " in '" + printable(name) + "' (" + RULE + ")");
            }
            length++;
            i += Character.charCount(cp);
        }
        if (length > MAX_LENGTH) {
            throw new IllegalArgumentException("lock name must be at most " + MAX_LENGTH + " characters, got " + length
                    + ": '" + printable(name.substring(0, 40)) + "...' (" + RULE + ")");
        }
        return name;
    }

    private static String hex(int cp) {
        return String.format("%04X", cp);
    }

    /** The name with control characters and lone surrogates escaped, safe to print. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || (Character.isSurrogate(c)
                    && !(Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)))
                    && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1))))) {
                b.append("\\u").append(hex(c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
