package io.latchkey.internal;

import io.latchkey.Lease;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/** One lease handed to the application. */
final class SharedLease implements Lease {
    final Grant grant;
    /** Whether this lease started its grant (rather than nesting in one). */
    final boolean fresh;
    /** Whether this is a read lease nested in a write grant. */
    private final boolean nestedRead;
    private final AtomicBoolean closed = new AtomicBoolean();

    SharedLease(Grant grant, boolean fresh) {
        this(grant, fresh, false);
    }

    SharedLease(Grant grant, boolean fresh, boolean nestedRead) {
        this.grant = grant;
        this.fresh = fresh;
        this.nestedRead = nestedRead;
    }

    @Override
    public String lockName() {
        return grant.local.name;
    }

    @Override
    public long fencingToken() {
        return grant.token;
    }

    @Override
    public boolean isValid() {
        return !closed.get() && !grant.ended() && grant.validity.isValid();
    }

    @Override
    public void ensureValid() {
        if (closed.get() || grant.ended()) {
            throw new IllegalStateException("lease of " + grant.target + " is closed");
        }
        grant.validity.ensureValid();
    }

    @Override
    public Duration remaining() {
        return closed.get() || grant.ended() ? Duration.ZERO : grant.validity.remaining();
    }

    @Override
    public java.util.concurrent.CompletionStage<io.latchkey.LockLostException> lost() {
        return grant.validity.lostStage();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            grant.leaseClosed(nestedRead);
        }
    }

    @Override
    public String toString() {
        return "Lease{" + grant.target + ", token=" + fencingToken() + ", valid=" + isValid() + '}';
    }
}
