package io.latchkey;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the backend records of a read-write lock at one moment, from
 * {@link DistributedReadWriteLock#inspect()}: the grants of its readers, and its writer's, each a
 * {@link LockState} of the lock's name with its holder, token, grant time and time left where the
 * backend tells them. A request that waits (a writer queued behind readers, a reader behind a waiting
 * writer) holds nothing and is not among them. A snapshot: by the time it is read the lock may have
 * changed hands.
 *
 * <p>Immutable and thread-safe.
 *
 * @param name the read-write lock's name
 * @param readers the held read grants, oldest first; empty if no reader holds
 * @param writer the held write grant, or {@code null} if no writer holds
 */
public record ReadWriteState(String name, List<LockState> readers, LockState writer) {

    public ReadWriteState {
        Objects.requireNonNull(name, "name");
        readers = List.copyOf(readers);
        if (readers.stream().anyMatch(r -> !r.isHeld()) || (writer != null && !writer.isHeld())) {
            throw new IllegalArgumentException("read-write lock '" + name + "': its readers and writer are held grants,"
                    + " got readers " + readers + " and writer " + writer);
        }
    }

    /** A read-write lock nobody holds. */
    public static ReadWriteState free(String name) {
        return new ReadWriteState(name, List.of(), null);
    }

    /** Whether a reader or a writer holds it, by the backend's record. */
    public boolean isHeld() {
        return writer != null || !readers.isEmpty();
    }

    /** The writer's grant, if a writer holds it. */
    public Optional<LockState> writerState() {
        return Optional.ofNullable(writer);
    }
}
