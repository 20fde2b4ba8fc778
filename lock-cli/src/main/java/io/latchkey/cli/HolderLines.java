package io.latchkey.cli;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockState;
import java.time.Duration;

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
        try (LockClient client = Backends.connect(uri)) {
            return client.lock(name).inspect();
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
