package io.latchkey.redis;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.Durations;
import io.latchkey.spi.Pauses;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.redisson.client.RedisAuthRequiredException;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.RedisWrongPasswordException;

/**
 * Redisson's failures as Latchkey's exceptions: what went wrong told once, with the lock, the key and
 * the server, and what to do; and which failures are a timeout, an authentication failure, or a Redis
 * Cluster that cannot serve a slot for the moment. Stateless.
 */
final class RedisErrors {

    private RedisErrors() {
    }

    /**
     * Redisson's failure as a Latchkey exception that names the lock, the key and the server once, with
     * advice that fits the cause. Redisson wraps the cause ("Unexpected exception while processing
     * command" around a refused connection), so the cause chain is searched, not the outer type; its own
     * messages are not passed on where they would mislead (a script and its arguments in a timeout, "increase
     * connection pool size" while the server restarts).
     *
     * @param where the key and the server, such as {@code redis key 'latchkey:x' on redis://host:6379}
     * @param action what was being done, such as {@code while acquiring lock 'x'}
     */
    static LockException translate(String lockName, String where, String action, Duration timeout, Throwable failure) {
        Throwable e = unwrap(failure);
        if (isAuthFailure(e)) {
            return new LockException(lockName, "authentication failed " + action + " (" + where + "): " + clean(e.getMessage())
                    + "; check the user name and password of the lock URI or options", e);
        }
        Throwable tls = cause(e, javax.net.ssl.SSLException.class);
        if (tls != null) {
            return new LockException(lockName, "TLS handshake failed " + action + " (" + where + "): " + clean(tls.getMessage())
                    + "; check that the server's certificate is trusted (option sslTruststore) and names the host", e);
        }
        Throwable unknownHost = cause(e, java.net.UnknownHostException.class);
        if (unknownHost != null || hasMessage(e, "failed to resolve")) {
            return new LockBackendUnavailableException(lockName, "cannot resolve the host of the Redis server " + action
                    + " (" + where + "): " + (unknownHost != null ? clean(unknownHost.getMessage()) : "unknown host")
                    + "; check the host name in the lock URI", e);
        }
        if (cause(e, io.netty.channel.ConnectTimeoutException.class) != null
                || cause(e, org.redisson.client.RedisResponseTimeoutException.class) != null
                || (cause(e, TimeoutException.class) != null && cause(e, java.net.ConnectException.class) == null)) {
            return didNotAnswer(lockName, where, action, timeout, e);
        }
        if (cause(e, java.net.ConnectException.class) != null) {
            return new LockBackendUnavailableException(lockName, "Redis refused the connection " + action + " (" + where
                    + "); check that the server is running and listens on the host and port of the lock URI", e);
        }
        if (e instanceof RedisTimeoutException) {
            if (hasMessage(e, "Unable to acquire connection") || hasMessage(e, "hasn't been written")) {
                return new LockBackendUnavailableException(lockName, "no connection to Redis could be had within the"
                        + " timeout option (" + Durations.format(timeout) + ") " + action + " (" + where + "): the server"
                        + " is down, restarting or unreachable; check that it is up and reachable", e);
            }
            return didNotAnswer(lockName, where, action, timeout, e);
        }
        if (cause(e, org.redisson.command.NoSyncedSlavesException.class) != null) {
            return new LockBackendUnavailableException(lockName, "no replica acknowledged the grant " + action + " (" + where
                    + ") within the replica wait (the smaller of 1 s and the timeout option), so it was undone: a failover"
                    + " could lose it; check the primary's replicas (INFO replication), or set " + RedisConfigs.CHECK_SYNCED_REPLICAS
                    + "=false to accept grants no replica has", e);
        }
        if (cause(e, org.redisson.client.RedisTryAgainException.class) != null) {
            // TRYAGAIN: the slot is being migrated and the script's keys are split between two nodes for now
            return new LockBackendUnavailableException(lockName, "the Redis Cluster is moving the hash slot of the lock's"
                    + " keys to another node (resharding) and refused the command " + action + " (" + where + ") until"
                    + " the move completes (Redis answered TRYAGAIN); try again once the slot has moved", e);
        }
        if (cause(e, org.redisson.client.RedisClusterDownException.class) != null
                || cause(e, org.redisson.client.RedisMasterDownException.class) != null) {
            return new LockBackendUnavailableException(lockName, "the Redis Cluster does not serve the lock's hash slot "
                    + action + " (" + where + "): " + clean(e.getMessage()).split("\\. channel:")[0]
                    + "; a failover may be under way, try again", e);
        }
        if (cause(e, RedisConnectionException.class) != null || cause(e, RedisNodeNotFoundException.class) != null
                || cause(e, java.io.IOException.class) != null || cause(e, io.netty.channel.ChannelException.class) != null
                || hasMessage(e, "Unexpected exception while processing command")
                || hasMessage(e, "Redisson is shutdown")) {
            return new LockBackendUnavailableException(lockName, "Redis could not be reached " + action + " (" + where
                    + "): the connection was lost or refused; check that the server is up and reachable", e);
        }
        return new LockException(lockName, "Redis failed " + action + " (" + where + "): " + e.getClass().getSimpleName()
                + (e.getMessage() == null ? "" : ": " + clean(e.getMessage())), e);
    }

    static LockBackendUnavailableException didNotAnswer(String lockName, String where, String action, Duration timeout,
            Throwable cause) {
        return new LockBackendUnavailableException(lockName, "Redis did not answer within the timeout option ("
                + Durations.format(timeout) + ") " + action + " (" + where
                + "); check that the server is up and reachable, or raise the timeout option", cause);
    }

    /** Redisson's message without the command, its script and arguments, or the connection details it appends. */
    static String clean(String message) {
        if (message == null) {
            return "";
        }
        String m = message;
        for (String cut : new String[] {", command:", " command:", ", params:", " params:", ", channel:", ", Redis client:",
                "Command:", "script:"}) {
            int i = m.indexOf(cut);
            if (i >= 0) {
                m = m.substring(0, i);
            }
        }
        return m.trim();
    }

    private static boolean hasMessage(Throwable failure, String part) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 20; t = t.getCause(), depth++) {
            if (t.getMessage() != null && t.getMessage().contains(part)) {
                return true;
            }
        }
        return false;
    }

    private static Throwable cause(Throwable failure, Class<? extends Throwable> type) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 20; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return t;
            }
        }
        return null;
    }

    /** Whether Redisson gave up on a timer of its own (connect or response), as opposed to an error it was told. */
    static boolean isTimeout(Throwable failure) {
        Throwable e = unwrap(failure);
        return cause(e, io.netty.channel.ConnectTimeoutException.class) != null
                || cause(e, org.redisson.client.RedisResponseTimeoutException.class) != null
                || cause(e, RedisTimeoutException.class) != null
                || (cause(e, TimeoutException.class) != null && cause(e, java.net.ConnectException.class) == null);
    }

    static boolean isAuthFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisWrongPasswordException || t instanceof RedisAuthRequiredException) {
                return true;
            }
            String m = t.getMessage();
            if (m != null && (m.contains("WRONGPASS") || m.contains("NOAUTH") || m.contains("invalid password")
                    || m.contains("invalid username-password"))) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof CancellationException && t.getCause() != null ? t.getCause() : t;
    }

    /**
     * {@code failure}, or the same told as a pause of this process ({@link Pauses}) if the call that began
     * at {@code startNanos} with the bound {@code boundNanos} gave up far past it: then Redis is not blamed.
     *
     * @param subject {@code "lock 'x'"} or {@code "semaphore 'x'"}
     * @param action what the call did, as the messages of this backend say it ({@code "while acquiring ..."})
     */
    static LockException orPaused(LockException failure, String name, String subject, String where, String action,
            long startNanos, long boundNanos) {
        String doing = action.startsWith("while ") ? action.substring("while ".length()) : action;
        return Pauses.since(startNanos, Duration.ofNanos(boundNanos)).explain(failure, name,
                subject + " (" + where + "): ", doing, "redis");
    }

    /**
     * Whether a Redis Cluster refused for the moment, or a connection to one of its nodes was lost or
     * refused (a node that restarts); see {@link RedisLockBackend#retryingInCluster}.
     */
    static boolean transientInCluster(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.redisson.client.RedisClusterDownException
                    || t instanceof org.redisson.client.RedisTryAgainException
                    || t instanceof RedisNodeNotFoundException
                    || t instanceof RedisConnectionException) {
                return true;
            }
        }
        return false;
    }
}
