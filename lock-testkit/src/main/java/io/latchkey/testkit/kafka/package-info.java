/**
 * Kafka in Testcontainers for the contract and the Kafka tests: {@link io.latchkey.testkit.kafka.KafkaServer}
 * (one broker) and {@link io.latchkey.testkit.kafka.KafkaCluster} (three), in KRaft mode, built from
 * Debian's JRE and the broker jars Maven resolved, whose folder the system property
 * {@value io.latchkey.testkit.kafka.KafkaNode#LIBS_PROPERTY} names.
 */
package io.latchkey.testkit.kafka;
