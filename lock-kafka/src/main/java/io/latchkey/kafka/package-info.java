/**
 * Latchkey on Kafka: a lock is a single-partition topic whose consumer group decides the holder.
 * Start at {@link io.latchkey.kafka.KafkaLockProvider}.
 */
package io.latchkey.kafka;
