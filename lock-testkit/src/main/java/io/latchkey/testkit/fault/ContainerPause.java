package io.latchkey.testkit.fault;

import java.io.IOException;

import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;

/**
 * Stops and continues a container's server processes, for the paused-server fault of
 * {@link io.latchkey.testkit.LockServer#pause()}: connections and listening sockets stay open and the
 * kernel still completes handshakes, but no process of the server runs.
 *
 * <p>Every process of the container except its PID 1 gets SIGSTOP, and later SIGCONT. PID 1 of each
 * kit image is a small shell supervisor that only waits for the server (so that a restart keeps the
 * container); a non-interactive shell is not woken by a stopped child, so it does not start a second
 * server. The kit does not use {@code docker pause}: on a cgroup v1 host the freezer gives up when the
 * container's tasks do not freeze within its retries, and on a loaded machine a pause then failed with
 * "OCI runtime pause failed: unable to freeze". A signal always arrives.
 *
 * <p>Both calls are idempotent: stopping a stopped process and continuing a running one change
 * nothing. Stateless and thread-safe.
 */
public final class ContainerPause {

    private ContainerPause() {
    }

    /** Stops every process of {@code container} but its supervisor. */
    public static void pause(GenericContainer<?> container) {
        signal(container, "STOP");
    }

    /** Continues every process of {@code container}. */
    public static void unpause(GenericContainer<?> container) {
        signal(container, "CONT");
    }

    private static void signal(GenericContainer<?> container, String signal) {
        // kill -1 reaches every process but PID 1 and the shell that sends it
        ExecResult result;
        try {
            result = container.execInContainer("sh", "-c", "kill -" + signal + " -1");
        } catch (IOException e) {
            throw new IllegalStateException("could not send SIG" + signal + " into container "
                    + container.getContainerName() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending SIG" + signal + " into container "
                    + container.getContainerName(), e);
        }
        if (result.getExitCode() != 0) {
            throw new IllegalStateException("SIG" + signal + " into container " + container.getContainerName()
                    + " failed (exit " + result.getExitCode() + "): " + result.getStderr().strip());
        }
    }
}
