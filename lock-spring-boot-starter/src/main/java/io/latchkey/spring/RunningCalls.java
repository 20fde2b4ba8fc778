package io.latchkey.spring;

import io.latchkey.LockClient;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * The {@link DistributedLocked} calls running now, so that closing the context never releases a lock
 * under a call that still runs: the next instance would start the job while this one is still inside it.
 *
 * <p>Stopped first when the context closes (the highest phase), before any bean is destroyed and so
 * before the {@link LockClient} releases its leases: it interrupts the threads of the running calls,
 * as Spring's own scheduler does on shutdown, and waits for them to return, for at most the client's
 * {@code lease} (after which the lock would be free anyway). A call that ignores the interrupt for
 * longer is left running, and its lease is released as the client closes. Thread-safe.
 */
final class RunningCalls implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RunningCalls.class);

    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final ObjectProvider<LockClient> client;
    private volatile boolean running;

    RunningCalls(ObjectProvider<LockClient> client) {
        this.client = client;
    }

    void enter() {
        threads.add(Thread.currentThread());
    }

    void exit() {
        threads.remove(Thread.currentThread());
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        if (threads.isEmpty()) {
            return;
        }
        LockClient c = client.getIfAvailable();
        Duration bound = c == null ? Duration.ZERO : c.options().lease();
        threads.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + bound.toNanos();
        try {
            while (!threads.isEmpty() && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!threads.isEmpty()) {
            log.warn("{} @DistributedLocked call(s) still running {} after the context began to close; their locks are"
                    + " released as the lock client closes", threads.size(), bound);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
