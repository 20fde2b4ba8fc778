package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.fault.ChildHolder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Rule 5 at the bound README states, for a backend's own tests: a holder in a child JVM is killed with
 * SIGKILL while a waiter of this JVM waits, and the waiter is granted the lock, or the permit, within
 * {@code lease} plus the wake-up budget ({@link #WAKE_UP_BUDGET}), with no other allowance. The
 * contract's {@code CrashRelease} groups assert the same plus the kit's slack, which the contract's
 * shared servers and parallel groups need; a backend's test with a server of its own can hold it to
 * the bound itself, so that a backend that overshoots its lease by one tick of its server fails.
 *
 * <p>Each run kills a new child; the waiter is a client of the caller's, connected before, so that the
 * time measured is the backend's expiry and the waiter's wake-up, not a connect. Stateless.
 */
public final class CrashFailover {

    /** The wake-up budget of docs/contract.md (rule 5): 250 ms. */
    public static final Duration WAKE_UP_BUDGET = KitGroup.WAKE_UP_BUDGET;

    private CrashFailover() {
    }

    /**
     * {@code runs} times: a child connected with {@code childUri} takes lock {@code name}, {@code waiter}
     * starts waiting, and the child is killed half a lease later (between two of its renewals); asserts
     * that every grant came within {@code lease} + {@link #WAKE_UP_BUDGET} of the kill, and returns the
     * times measured.
     */
    public static List<Duration> lock(String childUri, LockClient waiter, String name, Duration lease, int runs)
            throws Exception {
        return measure(childUri, waiter, lease, runs, "lock '" + name + "'",
                child -> child.acquire(name, Duration.ZERO, ChildHolder.STARTUP_GUARD),
                () -> waiter.lock(name).tryLockAsync(lease.multipliedBy(3)), 0);
    }

    /** As {@link #lock}, for one permit of semaphore {@code name} of {@code permits}, all of them held by children. */
    public static List<Duration> permit(String childUri, LockClient waiter, String name, int permits, Duration lease,
            int runs) throws Exception {
        return measure(childUri, waiter, lease, runs, "a permit of semaphore '" + name + "'",
                child -> child.acquirePermit(name, permits, Duration.ZERO, ChildHolder.STARTUP_GUARD),
                () -> CompletableFuture.supplyAsync(() -> {
                    try {
                        return waiter.semaphore(name, permits).tryAcquire(lease.multipliedBy(3)).map(Lease.class::cast);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, task -> new Thread(task, "crash-failover-waiter").start()),
                permits - 1);
    }

    /** {@code others}: children beside the one killed that hold the rest of the permits until the end. */
    private static List<Duration> measure(String childUri, LockClient waiter, Duration lease, int runs, String what,
            Function<ChildHolder, ChildHolder.Reply> take, Supplier<CompletableFuture<Optional<Lease>>> wait, int others)
            throws Exception {
        List<ChildHolder> keepers = new ArrayList<>();
        List<Duration> measured = new ArrayList<>();
        try {
            for (int i = 0; i < others; i++) {
                ChildHolder keeper = ChildHolder.start(childUri);
                keepers.add(keeper);
                assertThat(take.apply(keeper).kind()).as("a keeper's answer for %s", what).isEqualTo("acquired");
            }
            for (int run = 0; run < runs; run++) {
                try (ChildHolder child = ChildHolder.start(childUri)) {
                    ChildHolder.Reply got = take.apply(child);
                    assertThat(got.kind()).as("the child's answer for %s: %s", what, got).isEqualTo("acquired");
                    CompletableFuture<Optional<Lease>> next = wait.get();
                    Thread.sleep(lease.toMillis() / 2); // the waiter waits; the kill falls between the child's renewals
                    if (next.isDone()) {
                        throw grantedBeforeTheKill(what, next, child, keepers);
                    }
                    long killedAt = System.nanoTime();
                    child.kill();
                    Lease granted = next.get(lease.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS)
                            .orElseThrow(() -> new AssertionError("the waiter was not granted " + what));
                    measured.add(Duration.ofNanos(System.nanoTime() - killedAt));
                    granted.close();
                }
            }
        } finally {
            keepers.forEach(ChildHolder::close);
        }
        System.err.println("crash failover of " + what + " with lease " + lease + ": " + measured);
        assertThat(measured).as("from kill -9 of the holder to the waiter's grant of %s, lease=%s, runs", what, lease)
                .allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(lease.plus(WAKE_UP_BUDGET)));
        return measured;
    }

    /**
     * The waiter was granted while every holder still ran: either a holder had lost its lease already (its
     * own check says so, and its log says why) or two held one slot at once. Asks each holder which.
     */
    private static AssertionError grantedBeforeTheKill(String what, CompletableFuture<Optional<Lease>> next,
            ChildHolder child, List<ChildHolder> keepers) {
        StringBuilder holders = new StringBuilder();
        List<ChildHolder> all = new ArrayList<>(keepers);
        all.add(child);
        for (ChildHolder h : all) {
            ChildHolder.Reply check = h.request("check-then-write", ChildHolder.STARTUP_GUARD);
            h.next(ChildHolder.STARTUP_GUARD); // the write that follows the check; there is no resource here
            holders.append("\n  holder ").append(h.pid()).append(": ").append(check.kind()).append(' ')
                    .append(check.argument());
            if (h != child) {
                holders.append('\n').append(h.failure("  holder " + h.pid() + "'s log").getMessage());
            }
        }
        return child.failure("the waiter for " + what + " was granted " + next.join().map(Object::toString)
                .orElse("nothing") + " before the holder was killed; each holder's own check (valid|invalid, lost):"
                + holders);
    }
}
