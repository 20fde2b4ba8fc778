package io.latchkey.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.ResourceLocksProvider;

/**
 * How a contract group runs beside the others where JUnit's parallel execution is enabled
 * ({@code junit.jupiter.execution.parallel.enabled}): every group takes a resource lock on its
 * contract's server ({@link #SERVER}), to read when it only uses the server under names of its own
 * ({@link Beside}), to write, and so alone, when it pauses or restarts the server, counts the JVM's
 * threads and connections, or times the cold start of child JVMs ({@link Alone}): another group's
 * faults, threads or load would make its checks wrong. Without parallel execution every group runs
 * alone, as JUnit runs tests by default.
 */
final class GroupExecution {

    /** The key of the resource lock on the contract's server. */
    static final String SERVER = "io.latchkey.testkit.server";

    private GroupExecution() {
    }

    /**
     * A group that only uses the server: it runs beside other such groups, its own tests one at a
     * time in one thread, as they were written (a lock on the group itself keeps them there: JUnit
     * would otherwise run the tests of a concurrent group concurrently too).
     */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Documented
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock(providers = BesideLocks.class)
    @interface Beside {
    }

    /** A group that faults the server, counts the JVM's threads or times cold starts: it runs alone. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Documented
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock(value = SERVER, mode = ResourceAccessMode.READ_WRITE)
    @interface Alone {
    }

    /** The locks of a {@link Beside} group: the server to read, the group itself to write. */
    static final class BesideLocks implements ResourceLocksProvider {

        @Override
        public Set<Lock> provideForNestedClass(List<Class<?>> enclosingInstanceTypes, Class<?> group) {
            return Set.of(new Lock(SERVER, ResourceAccessMode.READ), new Lock(group.getName()));
        }
    }
}
