package io.latchkey.spi;

import java.util.List;
import java.util.Objects;

/**
 * What a backend records of a read-write lock's held grants, read by {@link ReadWriteBackend#inspectReadWrite}:
 * each as a {@link GrantRecord} of the lock's grants ({@link GrantRecord#waiters()} {@code -1}).
 *
 * @param readers the held read grants, oldest first
 * @param writer the held write grant, or {@code null} if no writer holds
 */
public record ReadWriteRecords(List<GrantRecord> readers, GrantRecord writer) {

    /** No reader and no writer holds. */
    public static final ReadWriteRecords FREE = new ReadWriteRecords(List.of(), null);

    public ReadWriteRecords {
        readers = List.copyOf(Objects.requireNonNull(readers, "readers"));
        if (writer != null && !readers.isEmpty()) {
            throw new IllegalArgumentException("a read-write lock held by a writer has no reader: got " + readers.size()
                    + " readers beside the writer");
        }
    }
}
