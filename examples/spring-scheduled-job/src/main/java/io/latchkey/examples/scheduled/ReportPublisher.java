package io.latchkey.examples.scheduled;

import io.latchkey.spring.LeaderOnly;
import io.latchkey.spring.LeadershipGrantedEvent;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * The one-per-cluster part of the service: while this instance leads the election
 * {@code report:publisher}, it publishes the latest summary every second, each with the term's number
 * (a fencing token for whatever it writes to); a standby instance starts it within the lease once the
 * leader's instance is gone.
 */
@Component
@LeaderOnly("report:publisher")
public class ReportPublisher implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ReportPublisher.class);

    private final String instance;
    private volatile long term;
    private ScheduledExecutorService timer; // guarded by this

    public ReportPublisher(@Value("${report.instance:${random.value}}") String instance) {
        this.instance = instance;
    }

    /** Published before {@link #start()}: the term this instance leads in. */
    @EventListener
    public void leading(LeadershipGrantedEvent event) {
        if (event.election().equals("report:publisher")) {
            term = event.term();
        }
    }

    /** The election starts it, not the context. */
    @Override
    public boolean isAutoStartup() {
        return false;
    }

    @Override
    public synchronized void start() {
        timer = Executors.newSingleThreadScheduledExecutor();
        timer.scheduleWithFixedDelay(() -> log.info("instance {} publishes the summary in term {}", instance, term),
                0, 1, TimeUnit.SECONDS);
    }

    @Override
    public synchronized void stop() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return timer != null;
    }

    /** The term this instance leads in, or was told of last. */
    public long term() {
        return term;
    }
}
