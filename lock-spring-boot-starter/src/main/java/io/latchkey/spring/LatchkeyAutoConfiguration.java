package io.latchkey.spring;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.etcd.EtcdLockProvider;
import io.latchkey.jdbc.JdbcLockProvider;
import io.latchkey.redis.RedisLockProvider;
import io.latchkey.zookeeper.ZooKeeperLockProvider;
import java.net.URI;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * Auto-configuration of the application's {@link LockClient} and of {@link DistributedLocked} methods.
 *
 * <p>The client, unless the application defines its own {@code LockClient} bean, is the first that
 * applies of: one connected to {@code latchkey.uri}; one on the application's single
 * {@code RedissonClient}, {@code CuratorFramework} or jetcd {@code Client} bean, when the matching
 * Latchkey backend is on the class path; one on the application's single {@code javax.sql.DataSource}
 * bean, when {@code lock-jdbc} is on the class path ({@code JdbcLockProvider.client}). Either way it is
 * closed on shutdown (which releases its locks) and never closes the application's own backend client
 * or DataSource. The {@code latchkey.*} options apply to it; see {@link LatchkeyProperties}. The
 * {@link LeaderOnly} beans campaign through it.
 *
 * <p>The DataSource comes last because most applications have one for their own data, while a
 * Redisson, Curator or jetcd client is there on purpose; adding {@code lock-jdbc} is what asks for
 * locks in the database, and {@code latchkey.uri} still overrides it. On the DataSource the locks are
 * rows of Latchkey's own tables (created on first use when the user may), each statement on a
 * connection borrowed from the application's pool and returned at once; on PostgreSQL one connection
 * stays borrowed while the client lives, to listen for releases, so the pool needs one more than the
 * application uses. The client is closed in the scheduler's lifecycle phase, before the pool is, so its
 * locks are released while the DataSource still serves. A DataSource of another database (H2, say)
 * fails start-up with a message that names it: set {@code latchkey.uri}, or define a {@code LockClient}.
 */
@AutoConfiguration(afterName = {"org.redisson.spring.starter.RedissonAutoConfigurationV4",
        "org.redisson.spring.starter.RedissonAutoConfigurationV2", "org.redisson.spring.starter.RedissonAutoConfiguration",
        // the application's DataSource, on Boot 3.5 and on Boot 4
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})
@EnableConfigurationProperties(LatchkeyProperties.class)
@Import({LatchkeyAutoConfiguration.UriClient.class, LatchkeyAutoConfiguration.OnRedisson.class,
        LatchkeyAutoConfiguration.OnCurator.class, LatchkeyAutoConfiguration.OnEtcd.class,
        LatchkeyAutoConfiguration.OnDataSource.class, LockedMethodsConfiguration.class})
public class LatchkeyAutoConfiguration {

    /**
     * Closes the auto-configured client when the context starts to shut down, in the scheduler's
     * lifecycle phase, rather than after every running job has finished (up to Spring's 30 s per phase):
     * another instance takes over at once, and a job still running loses its lease and is interrupted,
     * as it would be if the process died.
     */
    @Bean
    @ConditionalOnBean(name = "latchkeyLockClient")
    static SmartLifecycle latchkeyLockClientLifecycle(BeanFactory beanFactory) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                running = true;
            }

            @Override
            public void stop() {
                running = false;
                beanFactory.getBean("latchkeyLockClient", LockClient.class).close();
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    /** Campaigns for the {@link LeaderOnly} beans, and starts and stops them; does nothing without any. */
    @Bean
    LeaderOnlyBeans latchkeyLeaderOnlyBeans(BeanFactory beanFactory, ObjectProvider<LockClient> client,
            ApplicationEventPublisher publisher) {
        return new LeaderOnlyBeans((ConfigurableListableBeanFactory) beanFactory, client, publisher);
    }

    static LockOptions options(LatchkeyProperties p) {
        LockOptions.Builder b = LockOptions.builder();
        if (p.getLease() != null) {
            b.lease(p.getLease());
        }
        if (p.getSafetyMargin() != null) {
            b.safetyMargin(p.getSafetyMargin());
        }
        if (p.getTimeout() != null) {
            b.timeout(p.getTimeout());
        }
        if (p.getNamespace() != null && !p.getNamespace().isEmpty()) {
            b.namespace(p.getNamespace());
        }
        if (p.getOwner() != null && !p.getOwner().isEmpty()) {
            b.owner(p.getOwner());
        }
        return b.build();
    }

    // The client configurations are tried in their @Order, each only while no LockClient is defined yet.
    // Without it Spring takes these nested classes in the class file's order, which javac writes last
    // first: the Redisson, Curator and etcd clients came before the URI's.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "latchkey", name = "uri")
    @ConditionalOnMissingBean(LockClient.class)
    @Order(1)
    static class UriClient {

        @Bean(destroyMethod = "close")
        LockClient latchkeyLockClient(LatchkeyProperties properties) {
            return LockClient.connect(URI.create(properties.getUri().trim()), options(properties));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({RedisLockProvider.class, RedissonClient.class})
    @ConditionalOnSingleCandidate(RedissonClient.class)
    @ConditionalOnMissingBean(LockClient.class)
    @Order(2)
    static class OnRedisson {

        @Bean(destroyMethod = "close")
        LockClient latchkeyLockClient(RedissonClient redisson, LatchkeyProperties properties) {
            LockOptions options = options(properties);
            if (properties.getLease() == null) {
                // the Redisson client's watchdog timeout is the lease; the default margin follows it
                options = options.toBuilder().lease(java.time.Duration.ofMillis(redisson.getConfig().getLockWatchdogTimeout())).build();
            }
            return RedisLockProvider.client(redisson, options);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ZooKeeperLockProvider.class, CuratorFramework.class})
    @ConditionalOnSingleCandidate(CuratorFramework.class)
    @ConditionalOnMissingBean(LockClient.class)
    @Order(3)
    static class OnCurator {

        @Bean(destroyMethod = "close")
        LockClient latchkeyLockClient(CuratorFramework curator, LatchkeyProperties properties) {
            return ZooKeeperLockProvider.client(curator, null, options(properties));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({EtcdLockProvider.class, io.etcd.jetcd.Client.class})
    @ConditionalOnSingleCandidate(io.etcd.jetcd.Client.class)
    @ConditionalOnMissingBean(LockClient.class)
    @Order(4)
    static class OnEtcd {

        @Bean(destroyMethod = "close")
        LockClient latchkeyLockClient(io.etcd.jetcd.Client etcd, LatchkeyProperties properties) {
            return EtcdLockProvider.client(etcd, options(properties));
        }
    }

    // guarded by name: lock-jdbc is optional, and this class must not be loaded without it
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.latchkey.jdbc.JdbcLockProvider")
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean(LockClient.class)
    @Order(5)
    static class OnDataSource {

        @Bean(destroyMethod = "close")
        LockClient latchkeyLockClient(DataSource dataSource, LatchkeyProperties properties) {
            return JdbcLockProvider.client(dataSource, options(properties));
        }
    }
}
