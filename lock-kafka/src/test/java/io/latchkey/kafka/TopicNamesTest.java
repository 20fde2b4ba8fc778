package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Lock names become legal, distinct topic names. */
class TopicNamesTest {

    private static final String LEGAL = "[a-zA-Z0-9._-]{1,249}";

    @Test
    @DisplayName("names that differ only in characters Kafka forbids or treats alike map to distinct legal topics")
    void distinctLegalTopics() {
        List<String> names = List.of("job:nightly", "job.nightly", "job_nightly", "job-nightly", "job nightly",
                "job/nightly", "job_3Anightly", "Job:nightly", "ключ", "🔒", "a".repeat(255), "a".repeat(254) + "b",
                "🔒".repeat(255), "🔒".repeat(254) + "x");
        Set<String> topics = new HashSet<>();
        Set<String> collisionForms = new HashSet<>();
        for (String name : names) {
            String topic = TopicNames.topic("latchkey.", name);
            assertThat(topic).as("topic of %s", name).matches(LEGAL).startsWith("latchkey.");
            assertThat(TopicNames.topic("latchkey.", name)).as("deterministic").isEqualTo(topic);
            topics.add(topic);
            collisionForms.add(topic.replace('.', '_'));
        }
        assertThat(topics).hasSize(names.size());
        assertThat(collisionForms).as("distinct even when Kafka treats '.' and '_' alike").hasSize(names.size());
    }

    @Test
    @DisplayName("semaphore topics are legal, distinct from each other, from every lock topic and from the token topic,"
            + " even when Kafka treats '.' and '_' alike")
    void semaphoreTopicsApartFromLockTopics() {
        List<String> names = List.of("job", "_sjob", "s", "_s", "job:nightly", "_73job", "s_73job", "a".repeat(255),
                "a".repeat(254) + "b", "🔒".repeat(255), "tokens", "_tokens");
        Set<String> lockForms = new HashSet<>();
        Set<String> semaphoreForms = new HashSet<>();
        lockForms.add(KafkaLockBackend.tokenTopic("latchkey.").replace('.', '_'));
        for (String name : names) {
            lockForms.add(TopicNames.topic("latchkey.", name).replace('.', '_'));
            String topic = TopicNames.semaphoreTopic("latchkey.", name);
            assertThat(topic).as("semaphore topic of %s", name).matches(LEGAL).startsWith("latchkey._s");
            semaphoreForms.add(topic.replace('.', '_'));
        }
        assertThat(semaphoreForms).hasSize(names.size());
        assertThat(semaphoreForms).as("semaphore topics among lock topics").doesNotContainAnyElementsOf(lockForms);
    }

    @Test
    @DisplayName("a readable name stays readable")
    void readable() {
        assertThat(TopicNames.topic("latchkey.", "report-2024")).isEqualTo("latchkey.report-2024");
        assertThat(TopicNames.topic("latchkey.", "job:nightly")).isEqualTo("latchkey.job_3Anightly");
    }

    @Test
    @DisplayName("a lock's topic reads back as its name; a cut name's topic, a semaphore's topic and slot groups, the token"
            + " topic and topics of another form or prefix read as no lock's")
    void lockNamesReadBack() {
        for (String name : List.of("job:nightly", "job.nightly", "job_nightly", "a/b/c", "ключ", "🔒", "x", "_s", "a".repeat(240))) {
            assertThat(TopicNames.lockName("latchkey.", TopicNames.topic("latchkey.", name))).as("name of %s", name)
                    .isEqualTo(name);
        }
        String cut = TopicNames.topic("latchkey.", "🔒".repeat(255));
        assertThat(TopicNames.lockName("latchkey.", cut)).isNull();
        assertThat(TopicNames.isCut("latchkey.", cut)).isTrue();
        assertThat(TopicNames.isCut("latchkey.", TopicNames.topic("latchkey.", "a".repeat(240)))).isFalse();
        String semaphore = TopicNames.semaphoreTopic("latchkey.", "🔒".repeat(255));
        for (String notALock : List.of(TopicNames.semaphoreTopic("latchkey.", "job"), TopicNames.slotGroup(semaphore, 0),
                semaphore, KafkaLockBackend.tokenTopic("latchkey."), "latchkey.", "other.job", "latchkey.job_3a", "latchkey.job_41",
                "latchkey.a.b", "latchkey.job_", "latchkey._ED_A0_80")) {
            assertThat(TopicNames.lockName("latchkey.", notALock)).as("name of topic %s", notALock).isNull();
            assertThat(TopicNames.isCut("latchkey.", notALock)).as("cut: %s", notALock).isFalse();
        }
    }

    @Test
    @DisplayName("a prefix Kafka would refuse is an IllegalArgumentException naming the rule")
    void badPrefix() {
        assertThatThrownBy(() -> TopicNames.validatePrefix("locks:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("locks:").hasMessageContaining("a-z");
    }
}
