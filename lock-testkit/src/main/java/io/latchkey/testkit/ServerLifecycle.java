package io.latchkey.testkit;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a contract its server before the first test of the class: {@link LockContract} and
 * {@link SemaphoreContract} a shared one
 * or one of its own, {@link ClusterFailoverContract} always one of its own, closed after the class.
 * The contracts run one instance per class, so the server is there for every nested group.
 */
final class ServerLifecycle implements BeforeAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        // nested groups inherit the extension; they have no instance of their own here and use the enclosing one's server
        Object instance = context.getTestInstance().orElse(null);
        if (instance instanceof ServerContract<?> contract) {
            contract.useServer(context);
        } else if (instance instanceof ClusterFailoverContract<?> contract) {
            contract.useCluster(context);
        }
    }

    /** {@code server}, or a clear failure if a contract asked for it through {@code accessor} before it was started. */
    static <S extends LockServer> S started(S server, Object contract, String accessor) {
        if (server == null) {
            throw new IllegalStateException("the server of " + contract.getClass().getName() + " is started before its"
                    + " first test; " + accessor + " was called before that, from a constructor or a static initializer");
        }
        return server;
    }
}
