/**
 * The zookeeper backend of Latchkey.
 */
package io.latchkey.zookeeper;
