package io.latchkey.etcd;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.spi.GrantRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Reads what etcd records of a semaphore's held slots, for {@link EtcdLockBackend#inspectPermits}: the slot
 * keys {@code <semaphore prefix><slot>} of {@link EtcdSemaphores}, then the remaining TTL of the leases they
 * are bound to, as {@link EtcdInspection} reads a lock's holder key and its lease.
 *
 * <p>The first read is one range read of the semaphore's prefix (a linearizable read, no Raft commit), so
 * every slot is seen at one revision. Each slot key is a held permit: its value's holder text
 * ({@link EtcdSemaphores#holderOf}; none for a key of an older Latchkey, which wrote no holder), its create
 * revision the token its holder was given, and its number of permits, checked against the one asked for as
 * the taking transaction checks it ({@link EtcdSemaphores#mismatch}), so an inspection with another number
 * is refused whenever a permit is held. Slots at or past {@code permits} are not returned. Keys under the
 * prefix that are no slot key (a client whose namespace is the semaphore's prefix puts its keys there,
 * with a further '/') are passed over.
 *
 * <p>Then {@code LeaseTimeToLive} of each lease the slot keys are bound to (the permits of one client share
 * its one lease, so one request per holding client), sent together: the seconds etcd still keeps the slot
 * for a silent holder, rounded down, and zero for a lease that ended between the reads. etcd keeps no time
 * of a key, so no grant time is given: the shared layer takes the {@code at=} of the holder text. All reads
 * together wait at most the {@code timeout} option; none writes, so inspecting a semaphore nobody uses
 * leaves no key, lease or watch. Stateless; thread-safe.
 */
final class EtcdPermitInspection {

    /** What follows the semaphore's prefix in a slot key: the slot, as {@link EtcdSemaphores#slotKey} writes it. */
    private static final Pattern SLOT = Pattern.compile("0|[1-9][0-9]{0,8}");

    private EtcdPermitInspection() {
    }

    /**
     * The held slots below {@code permits} of semaphore {@code name}, each with its holder text, token and
     * time left, read within the {@code timeout} option.
     *
     * @throws IllegalArgumentException if a slot key says another number of permits
     */
    static Map<Integer, GrantRecord> read(EtcdLockBackend backend, String name, int permits)
            throws InterruptedException {
        long start = System.nanoTime();
        String prefix = backend.semaphorePrefix(name);
        String subject = backend.semaphoreSubject(name);
        GetResponse r = backend.call(name, subject, "reading the slot keys", backend.client().getKVClient()
                .get(EtcdLockBackend.bytes(prefix), GetOption.builder().isPrefix(true).build()));
        Map<Integer, KeyValue> held = new TreeMap<>();
        for (KeyValue kv : r.getKvs()) {
            String slot = kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
            if (!SLOT.matcher(slot).matches()) {
                continue;
            }
            if (EtcdSemaphores.permitsOf(kv) != permits) {
                throw EtcdSemaphores.mismatch(backend, name, kv, permits);
            }
            if (Integer.parseInt(slot) < permits) {
                held.put(Integer.parseInt(slot), kv);
            }
        }
        Map<Long, Duration> left = EtcdInspection.ttls(backend, name, subject, held.values(), start);
        Map<Integer, GrantRecord> records = new LinkedHashMap<>();
        held.forEach((slot, kv) -> records.put(slot, new GrantRecord(EtcdSemaphores.holderOf(kv),
                kv.getCreateRevision(), left.get(kv.getLease()), -1, null)));
        return records;
    }
}
