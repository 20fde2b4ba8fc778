package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Lock names to ZooKeeper node names: legal, deterministic, without collisions. */
class LockPathsTest {

    @Test
    @DisplayName("names are percent-encoded outside [A-Za-z0-9._-], and '.' and '..' are not left as they are")
    void encodesWhatZooKeeperRefuses() {
        assertThat(LockPaths.nodeName("report:nightly")).isEqualTo("report%3Anightly");
        assertThat(LockPaths.nodeName("a/b")).isEqualTo("a%2Fb");
        assertThat(LockPaths.nodeName("%2F")).isEqualTo("%252F");
        assertThat(LockPaths.nodeName(".")).isEqualTo("%2E");
        assertThat(LockPaths.nodeName("..")).isEqualTo("%2E%2E");
        assertThat(LockPaths.nodeName("...")).isEqualTo("...");
        assertThat(LockPaths.nodeName("zookeeper")).isEqualTo("zookeeper");
        assertThat(LockPaths.nodeName("é\uFFFF\uD83D\uDE00")).isEqualTo("%C3%A9%EF%BF%BF%F0%9F%98%80");
    }

    @Test
    @DisplayName("every mapped name is a legal path segment, and different names never share one, long names included")
    void legalAndWithoutCollisions() {
        String longA = "\u4e2d".repeat(255);
        String longB = "\u4e2d".repeat(254) + "\u6587";
        List<String> names = List.of("a", "A", "a:b", "a%3Ab", "a/b", "a%2Fb", ".", "..", "%2E", " ", "+", "~",
                "\u200B", "\uFEFF", "x".repeat(255), "x".repeat(254), longA, longB, "\uD83D\uDE00".repeat(255));
        Map<String, String> seen = new HashMap<>();
        for (String name : names) {
            String node = LockPaths.nodeName(name);
            PathUtils.validatePath("/latchkey/" + node);
            assertThat(node).as("the node of '%s'", name).doesNotContain("/").isNotIn(".", "..");
            assertThat(node.length()).as("the node name's length of '%s'", name).isLessThanOrEqualTo(LockPaths.KEPT + 1 + 64 + LockPaths.MAX_PLAIN);
            assertThat(seen.put(node, name)).as("another name mapped to %s", node).isNull();
            assertThat(LockPaths.nodeName(name)).as("deterministic").isEqualTo(node);
        }
        assertThat(LockPaths.nodeName(longA)).hasSize(LockPaths.KEPT + 1 + 64).contains("~");
    }

    @Test
    @DisplayName("no lock name maps to the semaphores' subtree: '@' is always encoded")
    void noLockNameMapsToTheSemaphores() {
        assertThat(LockPaths.nodeName(LockPaths.SEMAPHORES)).isEqualTo("%40semaphores");
        for (String name : List.of("@semaphores", "%40semaphores", "@", "x".repeat(255), "\u4e2d".repeat(255))) {
            assertThat(LockPaths.nodeName(name)).as("the node of '%s'", name).doesNotContain("@")
                    .isNotEqualTo(LockPaths.SEMAPHORES);
        }
    }

    @Test
    @DisplayName("no lock or semaphore name maps to the read-write locks' subtree, which differs from the semaphores'")
    void noNameMapsToTheReadWriteLocks() {
        assertThat(LockPaths.nodeName(LockPaths.READ_WRITE)).isEqualTo("%40rw");
        assertThat(LockPaths.READ_WRITE).isNotEqualTo(LockPaths.SEMAPHORES);
        for (String name : List.of("@rw", "%40rw", "@", "x".repeat(255))) {
            assertThat(LockPaths.nodeName(name)).as("the node of '%s'", name).isNotEqualTo(LockPaths.READ_WRITE);
        }
    }

    @Test
    @DisplayName("a node name reads back as its lock name; the long form, the subtrees and node names no lock name maps"
            + " to read as none")
    void nodeNamesReadBack() {
        for (String name : List.of("a", "report:nightly", "a/b", "%2F", ".", "..", "...", " ", "~", "\u00e9\uFFFF\uD83D\uDE00",
                "x".repeat(200), "\u4e2d".repeat(22))) {
            assertThat(LockPaths.lockName(LockPaths.nodeName(name))).as("the name of the node of '%s'", name).isEqualTo(name);
        }
        for (String node : List.of(LockPaths.SEMAPHORES, LockPaths.READ_WRITE, LockPaths.nodeName("x".repeat(201)),
                LockPaths.nodeName("\u4e2d".repeat(255)), "a%2f", "%2", "%zz", "%C3", "%61", ".", "..", "a b", "\u00e9", "")) {
            assertThat(LockPaths.lockName(node)).as("the name of node '%s'", node).isNull();
        }
        assertThat(LockPaths.isHashed(LockPaths.nodeName("x".repeat(201)))).isTrue();
        assertThat(LockPaths.isHashed(LockPaths.nodeName("~"))).isFalse();
    }

    @Test
    @DisplayName("the base path comes from the URI's path, prefixed by the namespace, and must be legal")
    void basePath() {
        assertThat(LockPaths.basePath("", null)).isEqualTo("/latchkey");
        assertThat(LockPaths.basePath("/", null)).isEqualTo("/latchkey");
        assertThat(LockPaths.basePath("/locks/", null)).isEqualTo("/locks");
        assertThat(LockPaths.basePath("/locks", "team-a")).isEqualTo("/team-a/locks");
        assertThat(LockPaths.basePath("", "team-a")).isEqualTo("/team-a/latchkey");
        assertThatThrownBy(() -> LockPaths.basePath("/a//b", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a legal ZooKeeper path");
        assertThatThrownBy(() -> LockPaths.basePath("/zookeeper/locks", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserves");
    }
}
