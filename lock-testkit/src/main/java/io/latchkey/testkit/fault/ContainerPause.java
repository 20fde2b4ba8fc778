package io.latchkey.testkit.fault;

import org.testcontainers.containers.GenericContainer;

/**
 * Freezes and thaws a container's processes ({@code docker pause}, the cgroup freezer), for the
 * paused-server fault of {@link io.latchkey.testkit.LockServer#pause()}: connections and listening
 * sockets stay open and the kernel still completes handshakes, but no process of the server runs.
 *
 * <p>Stateless and thread-safe.
 */
public final class ContainerPause {

    private ContainerPause() {
    }

    /** Pauses {@code container}; does nothing if it is paused already. */
    public static void pause(GenericContainer<?> container) {
        if (!isPaused(container)) {
            container.getDockerClient().pauseContainerCmd(container.getContainerId()).exec();
        }
    }

    /** Unpauses {@code container}; does nothing if it is not paused. */
    public static void unpause(GenericContainer<?> container) {
        if (isPaused(container)) {
            container.getDockerClient().unpauseContainerCmd(container.getContainerId()).exec();
        }
    }

    private static boolean isPaused(GenericContainer<?> container) {
        Boolean paused = container.getDockerClient().inspectContainerCmd(container.getContainerId()).exec()
                .getState().getPaused();
        return Boolean.TRUE.equals(paused);
    }
}
