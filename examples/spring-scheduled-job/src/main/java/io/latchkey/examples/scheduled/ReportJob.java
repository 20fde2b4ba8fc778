package io.latchkey.examples.scheduled;

import io.latchkey.spring.DistributedLocked;
import io.latchkey.spring.LockedCall;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** The job every instance schedules: under the lock, only one runs it at a time. */
@Component
public class ReportJob {

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    private final String instance;
    private final AtomicInteger runs = new AtomicInteger();

    public ReportJob(@Value("${report.instance:${random.value}}") String instance) {
        this.instance = instance;
    }

    @Scheduled(cron = "${report.cron:*/5 * * * * *}")
    @DistributedLocked(name = "report:summary", lockAtMostFor = "1m", lockAtLeastFor = "1s")
    public void summarize() {
        long token = LockedCall.current().orElseThrow().lease().fencingToken();
        log.info("instance {} writes the summary with fencing token {}", instance, token);
        runs.incrementAndGet();
    }

    /** How many times this instance ran the job. */
    public int runs() {
        return runs.get();
    }
}
