package io.latchkey.cli;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockState;
import java.time.Duration;
import java.util.List;

/**
 * What {@code latchkey leader} and {@code latchkey status} share: one read of a lock's state from the
 * backend ({@link io.latchkey.DistributedLock#inspect()}), and the words that tell its holder, the owner
 * first so that a script can cut it out.
 *
 * <p>Stateless.
 */
final class HolderLines {

    private HolderLines() {
    }

    /**
     * Connects with {@code uri} (or the environment), reads lock {@code name}'s state and disconnects.
     *
     * @param what what {@code name} is, for the message of a bad name ({@code "election"}, {@code "lock"})
     * @throws CliException 2 for a bad name or URI, 69 if the backend cannot be reached, 1 if it cannot tell
     */
    static LockState read(String uri, String name, String what) throws InterruptedException {
        try {
            LockClient.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad " + what + " name: " + e.getMessage());
        }
        return read(uri, client -> client.lock(name).inspect());
    }

    /**
     * As {@link #read(String, String, String)}, for each permit slot of semaphore {@code name} of
     * {@code permits} permits ({@link io.latchkey.DistributedSemaphore#inspect()}).
     *
     * @throws CliException 2 also for a number of permits out of range or other than the backend's
     */
    static List<LockState> readSlots(String uri, String name, int permits) throws InterruptedException {
        try {
            LockClient.checkSemaphore(name, permits);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad semaphore: " + e.getMessage() + " (--permits)");
        }
        return read(uri, client -> {
            try {
                return client.semaphore(name, permits).inspect();
            } catch (IllegalArgumentException e) {
                throw new CliException(ExitCodes.USAGE, e.getMessage() + "; give the --permits its runs use");
            }
        });
    }

    /** What one read does with the client. */
    private interface Read<T> {
        T from(LockClient client) throws InterruptedException;
    }

    private static <T> T read(String uri, Read<T> read) throws InterruptedException {
        try (LockClient client = Backends.connect(uri)) {
            return read.from(client);
        } catch (LockBackendUnavailableException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        } catch (UnsupportedOperationException | LockException e) {
            throw new CliException(ExitCodes.FAILURE, e.getMessage());
        }
    }

    /**
     * {@code <owner> term|token <n> (held since <instant> by the backend's clock, client started <instant>,
     * thread <name>, kept <ms> ms if it goes silent, <n> waiting)}, the number, the grant's time, the time
     * left and the waiters each left out where the backend does not tell them; where only the request's time
     * is known, {@code requested <instant> by the backend's|holder's clock} ({@link GrantTime.Source}).
     *
     * @param number what the token is called here: {@code term} for an election, {@code token} for a lock
     */
    static String holder(LockState state, String number) {
        Holder holder = state.holder().orElseThrow();
        String token = state.token().isPresent() ? " " + number + " " + state.token().getAsLong() : "";
        if (holder.equals(Holder.UNKNOWN)) {
            return "unknown" + token + " (a holder that records no identity: a Redisson client or an older Latchkey)";
        }
        return holder.owner() + token + " (" + state.since().map(s -> since(s) + ", ").orElse("")
                + "client started " + holder.clientStarted() + ", thread " + holder.thread()
                + state.expiresIn().map(HolderLines::expiry).orElse("")
                + (state.waiters().isPresent() ? ", " + state.waiters().getAsInt() + " waiting" : "") + ")";
    }

    /** {@code held since <instant> by the backend's clock}, or {@code requested <instant> by the ...}. */
    static String since(GrantTime since) {
        return (since.source().grant() ? "held since " : "requested ") + since.at() + " by the "
                + (since.source().backendClock() ? "backend's" : "holder's") + " clock";
    }

    private static String expiry(Duration left) {
        return ", kept " + left.toMillis() + " ms if it goes silent";
    }
}
