package io.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Holder;
import io.latchkey.LockOptions;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The holder text a backend writes with each grant, made once per thread name. */
class HolderStampTest {

    private final HolderStamp stamp = new HolderStamp(LockOptions.builder().owner("web-1:4242").build());

    @Test
    @DisplayName("the text is Holder's own, then the moment of the request, on every thread name, after a rename too")
    void holderTextAndRequestTime() {
        String original = Thread.currentThread().getName();
        try {
            for (String name : List.of("main", "pool 1/thread ü+2", "main")) {
                Thread.currentThread().setName(name);
                Instant before = Instant.now();
                String text = stamp.forCurrentThread();
                Instant after = Instant.now();
                Holder holder = Holder.parse(text).orElseThrow();
                assertThat(holder.owner()).isEqualTo("web-1:4242");
                assertThat(holder.thread()).isEqualTo(name);
                Instant at = HolderStamp.requestedAt(text).orElseThrow();
                assertThat(at).isBetween(before, after);
                assertThat(text).isEqualTo(Holder.ofCurrentThread("web-1:4242", holder.clientStarted()) + " at=" + at);
            }
        } finally {
            Thread.currentThread().setName(original);
        }
    }
}
