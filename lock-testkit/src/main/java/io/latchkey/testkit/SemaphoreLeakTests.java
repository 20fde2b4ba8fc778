package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockClient;
import io.latchkey.SemaphoreLease;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 10 for semaphores: after every lease and the client are closed, no thread, connection or
 * backend state remains ({@link SemaphoreContract#assertNothingLeftInBackend}).
 */
abstract class SemaphoreLeakTests extends SemaphoreGroup {

    @Test
    @DisplayName("after the leases and the client are closed, no library thread and no backend state of the semaphores remains")
    void nothingRemainsAfterClose() throws Exception {
        Set<Thread> before = libraryThreads();
        String one = name("one");
        String three = name("three");
        String lost = name("released-by-close");
        LockClient client = contract().newClient();
        try {
            SemaphoreLease a = hold(client.semaphore(one, 1));
            DistributedSemaphore s = client.semaphore(three, 3);
            SemaphoreLease b = hold(s);
            SemaphoreLease c = hold(s);
            hold(client.semaphore(lost, 2)); // left open: the client's close releases it
            c.close();
            b.close();
            a.close();
        } finally {
            client.close();
        }

        assertLibraryThreadsEnd(before);
        contract().assertNothingLeftInBackend(List.of(one, three, lost));
    }

    @Test
    @DisplayName("a closed client refuses new semaphores and permits with IllegalStateException")
    void closedClientRefusesUse() {
        LockClient client = contract().newClient();
        DistributedSemaphore semaphore = client.semaphore(name(), 2);
        client.close();

        assertThatThrownBy(() -> client.semaphore(name(), 2)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(semaphore::tryAcquire).isInstanceOf(IllegalStateException.class);
    }
}
