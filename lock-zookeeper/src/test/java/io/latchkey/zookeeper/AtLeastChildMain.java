package io.latchkey.zookeeper;

import io.latchkey.LockClient;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A holder in a child JVM for {@link ZooKeeperAtLeastExitTest}: runs an empty task under the lock with
 * an {@code atLeast} bound, prints {@code ran}, waits for one line on standard input, then either
 * closes its client and exits ({@code close}) or exits without closing it ({@code exit}).
 *
 * <p>Arguments: the URI with its options, the lock name, {@code atLeast} in milliseconds, the mode.
 */
public final class AtLeastChildMain {

    private AtLeastChildMain() {
    }

    public static void main(String[] args) throws Exception {
        LockClient client = LockClient.connect(args[0]);
        LockResult<Void> result = client.lock(args[1]).runLocked(LockRequest.builder().wait(Duration.ofSeconds(30))
                .atLeast(Duration.ofMillis(Long.parseLong(args[2]))).build(), lease -> { });
        System.out.println(result.ran() ? "ran" : "not-ran " + result);
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        if (args[3].equals("close")) {
            client.close();
        }
        System.exit(0);
    }
}
