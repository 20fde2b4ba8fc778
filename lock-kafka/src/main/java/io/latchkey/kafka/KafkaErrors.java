package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.Pauses;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;

/**
 * The Kafka backend's failures told apart and worded: those no retry mends (credentials refused, TLS
 * refused, a permission missing), a pause of the whole process, and a connect that failed. Each
 * message names the lock or the brokers and says what to do.
 *
 * <p>Thread-safe (immutable).
 */
final class KafkaErrors {

    private final LockOptions options;
    private final String bootstrap;
    private final String prefix;

    /**
     * @param bootstrap the {@code bootstrap.servers} setting, as messages name the brokers
     * @param prefix the topic prefix, as the ACLs a lock needs are named by it
     */
    KafkaErrors(LockOptions options, String bootstrap, String prefix) {
        this.options = options;
        this.bootstrap = bootstrap;
        this.prefix = prefix;
    }

    /** Why a connect that began at {@code start}, bounded by {@code bound}, failed with {@code e}. */
    LockException connectFailure(Throwable e, Deadline start, Duration bound) {
        String at = "kafka at " + bootstrap;
        String paused = pausedFor(start, bound);
        if (paused != null) {
            return new LockBackendUnavailableException(null, "connecting to " + at + " gave up: " + paused + "; " + e, e);
        }
        LockException security = securityFailure(null, at, e);
        if (security != null) {
            return security;
        }
        if (e instanceof ConfigException && String.valueOf(e.getMessage()).contains("resolvable")) {
            return new LockBackendUnavailableException(null, "no host of " + at + " could be resolved: " + e.getMessage()
                    + "; check the host names", e);
        }
        return new LockBackendUnavailableException(null, at + " did not answer within "
                + Durations.format(bound) + ": " + e + "; check that the brokers run and are reachable", e);
    }

    /**
     * The failures that no retry mends: credentials refused, TLS refused, a permission missing. Each
     * a {@link LockException} whose message says which; {@code null} for any other failure.
     */
    LockException securityFailure(String lockName, String subject, Throwable e) {
        String user = options.username() != null ? "user '" + options.username() + "'" : "the client's principal";
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SaslAuthenticationException) {
                return new LockException(lockName, subject + ": authentication failed for " + user + " ("
                        + t.getMessage() + "); check the user name, the password and the SASL mechanism", t);
            }
            if (t instanceof SslAuthenticationException) {
                return new LockException(lockName, subject + ": the TLS handshake failed (" + t.getMessage() + ");"
                        + " check that the truststore holds the CA that signed the brokers' certificates", t);
            }
            if (t instanceof AuthenticationException) {
                return new LockException(lockName, subject + ": authentication failed for " + user + " ("
                        + t.getMessage() + "); check the client's security settings", t);
            }
        }
        return null;
    }

    /**
     * {@link Pauses}' "this process was paused for N" if a call that began at {@code start} with the bound
     * {@code bound} overran it by more than the bound again (at least a second): no slow server explains
     * that, a pause of the whole process (a long GC, SIGSTOP, a suspended VM) does; {@code null} otherwise.
     */
    static String pausedFor(Deadline start, Duration bound) {
        return Pauses.since(start.nanoTime(), bound).pause().map(p -> Pauses.sentence(p, bound, null, "the brokers"))
                .orElse(null);
    }

    /**
     * A permission missing on the lock's topic, group or the cluster, as a {@link LockException}
     * naming the operation refused and the ACLs a lock needs; {@code null} for any other failure.
     *
     * @param operation the operation the call needed, such as {@code DESCRIBE on topic 'latchkey.x'}
     */
    LockException authorizationFailure(String lockName, String operation, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthorizationException) {
                String who = options.username() != null ? "user '" + options.username() + "'" : "the client's principal";
                return new LockException(lockName, "kafka at " + bootstrap + " refused lock '" + lockName + "': " + who
                        + " may not " + operation + " (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ");"
                        + " a lock needs ACLs for CREATE, DESCRIBE, READ and WRITE on topics with prefix '" + prefix
                        + "' (CREATE only if the topic does not exist yet) and READ and DESCRIBE on groups with prefix '"
                        + prefix + "'", t);
            }
        }
        return null;
    }

    /** The cause of an {@link ExecutionException} (the Kafka clients' futures wrap their failures in one), else {@code e}. */
    static Throwable cause(Throwable e) {
        return e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    }
}
