/**
 * ZooKeeper fixtures of the test kit: a standalone server and a three-node ensemble, built from
 * Debian's {@code zookeeper} package.
 */
package io.latchkey.testkit.zookeeper;
