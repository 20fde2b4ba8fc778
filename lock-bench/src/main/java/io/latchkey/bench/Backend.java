package io.latchkey.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.etcd.EtcdServer;
import io.latchkey.testkit.jdbc.MariaDbServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import io.latchkey.testkit.kafka.KafkaServer;
import io.latchkey.testkit.redis.RedisServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.zookeeper.KeeperException;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The backends: how the kit starts a server for each, the raw clients Latchkey is compared with,
 * and how to count what a run leaves on the server.
 */
enum Backend {
    REDIS(RedisServer::start, Duration.ofMillis(50),
            List.of(new Variant("Redisson RLock", RawLockers::redissonLock),
                    new Variant("Redisson RFencedLock", RawLockers::redissonFencedLock))),
    ZOOKEEPER(ZooKeeperServer::start, Duration.ofMillis(50),
            List.of(new Variant("Curator InterProcessMutex", RawLockers::curatorMutex))),
    ETCD(EtcdServer::start, Duration.ofMillis(50),
            List.of(new Variant("jetcd Lock", RawLockers::jetcdLock),
                    new Variant("lease + txn floor", RawLockers::jetcdTxn))),
    // a joining consumer needs a rebalance before it waits like the others: hold long enough for it
    KAFKA(KafkaServer::start, Duration.ofSeconds(1),
            List.of(new Variant("naive consumer lock", RawLockers::kafkaNaive))),
    POSTGRESQL(PostgresServer::start, Duration.ofMillis(50),
            List.of(new Variant("ShedLock JdbcTemplateLockProvider", JdbcLockers::shedLock),
                    new Variant("Spring JdbcLockRegistry", JdbcLockers::springRegistry))),
    MARIADB(MariaDbServer::start, Duration.ofMillis(50),
            List.of(new Variant("ShedLock JdbcTemplateLockProvider", JdbcLockers::shedLock),
                    new Variant("Spring JdbcLockRegistry", JdbcLockers::springRegistry)));

    /** Latchkey's variant, the same for every backend: the URI selects the provider. */
    static final Variant LATCHKEY = new Variant("Latchkey", LatchkeyLocker::new);

    private final Supplier<LockServer> fixture;
    private final Duration defaultHold;
    private final List<Variant> raw;

    Backend(Supplier<LockServer> fixture, Duration defaultHold, List<Variant> raw) {
        this.fixture = fixture;
        this.defaultHold = defaultHold;
        this.raw = raw;
    }

    /** How a variant connects. */
    interface Opener {
        Locker open(Target target) throws Exception;
    }

    /** Latchkey or one raw client. */
    record Variant(String label, Opener opener) {
    }

    String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Backend of(String key) {
        for (Backend b : values()) {
            if (b.key().equals(key.trim().toLowerCase(Locale.ROOT))) {
                return b;
            }
        }
        throw new IllegalArgumentException("unknown backend '" + key + "': use redis, zookeeper, etcd, kafka, postgresql or mariadb");
    }

    LockServer startServer() {
        return fixture.get();
    }

    /** How long a holder keeps the lock in the hand-over scenario, so that the others are waiting when it lets go. */
    Duration defaultHold() {
        return defaultHold;
    }

    /** Latchkey first, then the raw clients. */
    List<Variant> variants() {
        Deque<Variant> all = new ArrayDeque<>(raw);
        all.addFirst(LATCHKEY);
        return List.copyOf(all);
    }

    Variant variant(String label) {
        return variants().stream().filter(v -> v.label().equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no variant '" + label + "' for " + key()));
    }

    /**
     * How many objects the server holds now: Redis keys (DBSIZE), ZooKeeper nodes outside
     * {@code /zookeeper}, etcd keys, Kafka topics plus groups, the rows of the database's tables.
     */
    long serverObjects(Target t) throws Exception {
        switch (this) {
            case REDIS: {
                Config config = new Config();
                config.useSingleServer().setAddress(t.uri());
                RedissonClient r = Redisson.create(config);
                try {
                    return r.getKeys().count();
                } finally {
                    r.shutdown();
                }
            }
            case ZOOKEEPER: {
                try (CuratorFramework c = CuratorFrameworkFactory.newClient(String.join(",", t.hostPorts()),
                        new RetryOneTime(100))) {
                    c.start();
                    c.blockUntilConnected();
                    return countNodes(c, "/") - 1;
                }
            }
            case ETCD: {
                try (Client c = RawLockers.etcd(t)) {
                    ByteSequence zero = ByteSequence.from(new byte[] {0});
                    return c.getKVClient().get(zero, GetOption.builder().withRange(zero).withCountOnly(true).build())
                            .get().getCount();
                }
            }
            case KAFKA: {
                Properties p = new Properties();
                p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, String.join(",", t.hostPorts()));
                try (Admin a = Admin.create(p)) {
                    return a.listTopics().names().get().size() + a.listGroups().all().get().size();
                }
            }
            case POSTGRESQL:
            case MARIADB:
                return JdbcLockers.rows(t);
            default:
                throw new AssertionError(this);
        }
    }

    /**
     * A count of the operations the server has run so far, where one is read simply: Redis's
     * {@code total_commands_processed} ({@code INFO stats}; a reading is counted by the next one),
     * ZooKeeper's {@code zk_packets_received} ({@code mntr}; the word itself is not a packet), etcd's gRPC
     * messages received ({@code /metrics}, a plain HTTP read that is no gRPC message), PostgreSQL's statements
     * ({@link JdbcLockers#statements}); -1 for Kafka and MariaDB, not counted.
     */
    long serverOperations(Target t) throws Exception {
        switch (this) {
            case REDIS: {
                String info = redisCommand(t, "INFO", "stats");
                return Long.parseLong(field(info, "total_commands_processed:"));
            }
            case ZOOKEEPER: {
                String mntr = fourLetterWord(t, "mntr");
                return Long.parseLong(field(mntr, "zk_packets_received\t"));
            }
            case ETCD:
                return etcdMessagesReceived(t);
            case POSTGRESQL:
                return JdbcLockers.statements(t);
            default:
                return -1;
        }
    }

    /** etcd's count of the gRPC messages it received, every method's (a keepalive stream's messages each). */
    private static long etcdMessagesReceived(Target t) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://" + t.hostPorts().get(0) + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        long sum = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith("grpc_server_msg_received_total{")) {
                sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** A server without a password: one command in RESP, its bulk-string reply. */
    private static String redisCommand(Target t, String... args) throws Exception {
        String[] hp = t.hostPorts().get(0).split(":");
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.setSoTimeout(10_000);
            StringBuilder cmd = new StringBuilder("*").append(args.length).append("\r\n");
            for (String a : args) {
                cmd.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
            }
            s.getOutputStream().write(cmd.toString().getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            StringBuilder header = new StringBuilder();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new IllegalStateException("Redis closed the connection");
                }
                header.append((char) c);
            }
            String h = header.toString().trim();
            if (!h.startsWith("$")) {
                throw new IllegalStateException("Redis answered " + args[0] + " with '" + h + "'");
            }
            byte[] body = new byte[Integer.parseInt(h.substring(1))];
            in.readFully(body);
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** ZooKeeper's answer to a four-letter word on the first server of the URI. */
    private static String fourLetterWord(Target t, String word) throws Exception {
        String[] hp = t.hostPorts().get(0).split(":");
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The value after {@code prefix} (a regular expression) at the start of a line of {@code text}. */
    private static String field(String text, String prefix) {
        Matcher m = Pattern.compile("(?m)^" + prefix + "(\\d+)").matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no " + prefix + " in the server's answer: " + text);
        }
        return m.group(1);
    }

    /**
     * The nodes at and under {@code path}; a node deleted while it is counted (ZooKeeper's container
     * manager removing an emptied lock node, say) counts as gone.
     */
    private static long countNodes(CuratorFramework c, String path) throws Exception {
        List<String> children;
        try {
            children = c.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
        long n = 1;
        for (String child : children) {
            String full = (path.equals("/") ? "" : path) + "/" + child;
            if (!full.equals("/zookeeper")) {
                n += countNodes(c, full);
            }
        }
        return n;
    }
}
