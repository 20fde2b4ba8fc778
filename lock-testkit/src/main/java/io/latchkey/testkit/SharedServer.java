package io.latchkey.testkit;

import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A server that the test classes of one JVM share under a key, as a JUnit extension for test classes
 * that are not a {@link LockContract}; a contract shares its server under the key given to {@link LockContract}'s constructor
 * the same way, so a backend's own tests and its contract test run on one container.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final SharedServer<RedisServer> REDIS = SharedServer.of("redis", RedisServer::start);
 * }</pre>
 *
 * <p>The first class that asks for a key starts the server; it lives in JUnit's root store, which
 * closes it once every test of the JVM has run. Every class that uses one key must start the same
 * kind of server, and leave it serving: a test that restarts the server returns once it serves
 * again at the same endpoints ({@link LockServer#restart()}); one that breaks it for good keeps a
 * server of its own. A server that failed to start fails every class that asks for it, without a
 * second attempt.
 *
 * <p>Thread-safety: JUnit's store starts each server once even if classes run in parallel;
 * {@link #get()} may be called from any thread once the class's {@code @BeforeAll} phase began.
 */
public final class SharedServer<S extends LockServer> implements BeforeAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedServer.class);

    private final String key;
    private final Supplier<? extends S> start;
    private volatile S server;

    private SharedServer(String key, Supplier<? extends S> start) {
        this.key = key;
        this.start = start;
    }

    /** The server shared under {@code key}, started with {@code start} by the first class that asks. */
    public static <S extends LockServer> SharedServer<S> of(String key, Supplier<? extends S> start) {
        return new SharedServer<>(requireKey(key), Objects.requireNonNull(start, "start"));
    }

    static String requireKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isBlank()) {
            throw new IllegalArgumentException("a shared server's key must not be blank, got '" + key + "'");
        }
        return key;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server = in(context.getRoot(), key, start);
    }

    /** The running server. */
    public S get() {
        S s = server;
        if (s == null) {
            throw new IllegalStateException("the shared server '" + key + "' is started before the first test of a class"
                    + " that registers it with @RegisterExtension on a static field; get() was called before that");
        }
        return s;
    }

    /**
     * The server under {@code key} in the store of {@code context}, started with {@code start} on first
     * use; the store closes it when {@code context} ends (JUnit closes every stored {@link AutoCloseable}).
     */
    static <S extends LockServer> S in(ExtensionContext context, String key, Supplier<? extends S> start) {
        Object stored = context.getStore(NAMESPACE).getOrComputeIfAbsent(key, k -> start.get());
        @SuppressWarnings("unchecked") // one key, one kind of server: the contract of this class
        S s = (S) stored;
        return s;
    }
}
