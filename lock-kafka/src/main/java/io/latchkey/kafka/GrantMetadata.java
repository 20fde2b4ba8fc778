package io.latchkey.kafka;

import java.util.Optional;

/**
 * What a holder writes in the metadata of the offset commit that confirms its grant (offset 0 of its
 * partition): the {@link io.latchkey.Holder} text, its member id in the group, the grant's fencing token
 * and its session timeout. The commit is made for every grant anyway, so the identity costs no request
 * of its own, and any client reads it back with one OffsetFetch ({@link KafkaInspection}).
 *
 * <p>One line, {@code owner=web-1:4242 started=2026-12-05T07:30:00.123Z thread=main
 * member=latchkey-<group>-7-<uuid> token=42 session=5000}: the holder's fields first, as
 * {@link io.latchkey.Holder#parse} reads them, then ours. The holder's values are URL-encoded and no member
 * id holds a space (a classic group's member id is the client id, ours, a {@code -} and a UUID), so no
 * field can pass for another. The member id, not only the client id it begins with, tells an inspector
 * whether the commit belongs to the membership assigned the partition now: a member expelled and back
 * keeps its client id but is given a new member id. A semaphore slot's commit has no token (its marker
 * follows the commit) and writes none; it writes instead the moment the commit was sent, by the holder's
 * clock ({@code confirmed=<epoch ms>}), before which its marker cannot lie: an inspector finds the marker, and
 * so the token, from there ({@link KafkaPermitInspection}).
 *
 * <p>Its length: the owner is at most 200 characters and the thread name 100, up to nine times as many once
 * URL-encoded (a character of three UTF-8 bytes), the member id at most 249 characters of group name and
 * some 60 more: at most about 3.1 KB, under the broker's default {@code offset.metadata.max.bytes} (4096).
 * A broker with a lower limit refuses the commit; the member then commits {@link #withoutHolder()}.
 *
 * @param holder the holder text, or {@code null} if the commit carries none
 * @param memberId the coordinator's id of the member whose commit confirmed the grant
 * @param token the grant's fencing token, or -1 if not known at the commit
 * @param sessionMs the member's {@code session.timeout.ms}, or -1 if not written
 * @param confirmedMs when a slot's member sent the commit, epoch milliseconds by its clock, or -1 if not written
 *     (a lock's commit, or a semaphore's of a Latchkey before this one)
 */
record GrantMetadata(String holder, String memberId, long token, long sessionMs, long confirmedMs) {

    private static final String MEMBER = "member=";

    /** The line written as the commit's metadata. */
    String text() {
        return (holder != null ? holder + " " : "") + withoutHolder();
    }

    /** The line without the holder text, for a broker whose {@code offset.metadata.max.bytes} refuses the full one. */
    String withoutHolder() {
        return MEMBER + memberId + (token >= 0 ? " token=" + token : "")
                + (sessionMs >= 0 ? " session=" + sessionMs : "")
                + (confirmedMs >= 0 ? " confirmed=" + confirmedMs : "");
    }

    /**
     * Reads a commit's metadata back; empty if it is none of ours (no metadata, or a Latchkey before this
     * one, which wrote the member's client id alone).
     */
    static Optional<GrantMetadata> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        int at = text.startsWith(MEMBER) ? 0 : text.indexOf(" " + MEMBER) + 1; // 0: not found, or no holder
        if (at == 0 && !text.startsWith(MEMBER)) {
            return Optional.empty();
        }
        String holder = at == 0 ? null : text.substring(0, at - 1);
        String memberId = null;
        long token = -1;
        long session = -1;
        long confirmed = -1;
        for (String field : text.substring(at).split(" ")) {
            int eq = field.indexOf('=');
            String value = eq < 0 ? "" : field.substring(eq + 1);
            try {
                switch (eq < 0 ? "" : field.substring(0, eq)) {
                    case "member" -> memberId = value;
                    case "token" -> token = Long.parseLong(value);
                    case "session" -> session = Long.parseLong(value);
                    case "confirmed" -> confirmed = Long.parseLong(value);
                    default -> {
                        // a field of a later version
                    }
                }
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        if (memberId == null || memberId.isEmpty() || token < -1) {
            return Optional.empty();
        }
        return Optional.of(new GrantMetadata(holder, memberId, token, session, confirmed));
    }
}
