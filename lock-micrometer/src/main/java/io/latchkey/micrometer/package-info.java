/**
 * Micrometer metrics of Latchkey locks: {@link io.latchkey.micrometer.LatchkeyMetrics} turns the lock
 * events of a client into timers, counters and gauges.
 */
package io.latchkey.micrometer;
