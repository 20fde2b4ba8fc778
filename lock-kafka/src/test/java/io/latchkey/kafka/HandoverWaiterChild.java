package io.latchkey.kafka;

import io.latchkey.LockClient;
import java.time.Duration;

/**
 * A waiter in a child JVM for {@link KafkaHandoverModeTest}: connects with the URI given, waits for
 * the lock until killed.
 */
public final class HandoverWaiterChild {

    private HandoverWaiterChild() {
    }

    public static void main(String[] args) throws Exception {
        LockClient client = LockClient.connect(args[0]);
        client.lock(args[1]).tryLock(Duration.ofMinutes(2));
    }
}
