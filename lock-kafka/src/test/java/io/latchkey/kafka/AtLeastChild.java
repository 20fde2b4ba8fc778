package io.latchkey.kafka;

import io.latchkey.LockClient;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A holder in a child JVM for {@link KafkaAtLeastExitTest}: runs a task under the lock with an
 * {@code atLeast} bound, prints {@code ran <token>}, then waits for a line on stdin: {@code exit} ends
 * the JVM without closing the client (as a crashing or careless application would); nothing else is
 * read, so the parent may kill it with SIGKILL instead.
 */
public final class AtLeastChild {

    private AtLeastChild() {
    }

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        Duration atLeast = Duration.parse(args[2]);
        LockClient client = LockClient.connect(uri);
        LockResult<Long> r = client.lock(name).callLocked(LockRequest.builder().wait(Duration.ofSeconds(30))
                .atLeast(atLeast).build(), lease -> lease.fencingToken());
        System.out.println(r.ran() ? "ran " + r.value() : "not-ran " + r.outcome());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if ("exit".equals(in.readLine())) {
            System.exit(0); // the client is not closed
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
