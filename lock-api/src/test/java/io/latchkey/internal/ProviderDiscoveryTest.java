package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.memory.InMemoryProvider;
import io.latchkey.memory.OtherMemoryProvider;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Provider discovery with zero, one and two providers on the class path. */
class ProviderDiscoveryTest {

    @TempDir
    Path dir;

    ClassLoader loaderWith(Class<?>... providers) throws IOException {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        StringBuilder lines = new StringBuilder();
        for (Class<?> p : providers) {
            lines.append(p.getName()).append('\n');
        }
        Files.writeString(services.resolve("io.latchkey.spi.LockProviderFactory"), lines.toString());
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader());
    }

    @Test
    @DisplayName("no provider at all: the message names the four artifacts")
    void none() throws IOException {
        ClassLoader loader = loaderWith();
        assertThatThrownBy(() -> ProviderDiscovery.find("redis", loader, null))
                .isInstanceOf(LockException.class)
                .hasMessage("no Latchkey provider on the class path for scheme 'redis': add one of the artifacts "
                        + "io.latchkey:lock-redis, io.latchkey:lock-zookeeper, io.latchkey:lock-etcd or io.latchkey:lock-kafka");
    }

    @Test
    @DisplayName("one provider, another scheme: the message names what is there and the artifacts")
    void wrongScheme() throws IOException {
        ClassLoader loader = loaderWith(InMemoryProvider.class);
        assertThatThrownBy(() -> ProviderDiscovery.find("redis", loader, null))
                .isInstanceOf(LockException.class)
                .hasMessage("no Latchkey provider for scheme 'redis'; the class path has io.latchkey.memory.InMemoryProvider"
                        + " (schemes memory). Use one of their schemes, or add one of the artifacts "
                        + "io.latchkey:lock-redis, io.latchkey:lock-zookeeper, io.latchkey:lock-etcd or io.latchkey:lock-kafka");
    }

    @Test
    @DisplayName("one provider for the scheme: it is used, and the client works end to end")
    void one() throws Exception {
        ClassLoader loader = loaderWith(InMemoryProvider.class);
        assertThat(ProviderDiscovery.find("memory", loader, null)).isInstanceOf(InMemoryProvider.class);
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try (LockClient client = LockClient.connect("memory://discovery-one?lease=2s&timeout=1s&flavour=plain")) {
            assertThat(client.options().lease()).isEqualTo(Duration.ofSeconds(2));
            try (Lease lease = client.lock("job").lock(Duration.ofSeconds(1))) {
                assertThat(lease.isValid()).isTrue();
            }
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    @Test
    @DisplayName("two providers for the scheme: the message lists both and points to -Dlatchkey.provider")
    void two() throws IOException {
        ClassLoader loader = loaderWith(InMemoryProvider.class, OtherMemoryProvider.class);
        assertThatThrownBy(() -> ProviderDiscovery.find("memory", loader, null))
                .isInstanceOf(LockException.class)
                .hasMessage("several Latchkey providers serve scheme 'memory': io.latchkey.memory.InMemoryProvider"
                        + " (schemes memory), io.latchkey.memory.OtherMemoryProvider (schemes memory)."
                        + " Keep one of them on the class path, or choose one with -Dlatchkey.provider=<class name>");
    }

    @Test
    @DisplayName("two providers and -Dlatchkey.provider: the chosen one is used")
    void chosen() throws IOException {
        ClassLoader loader = loaderWith(InMemoryProvider.class, OtherMemoryProvider.class);
        assertThat(ProviderDiscovery.find("memory", loader, OtherMemoryProvider.class.getName()))
                .isInstanceOf(OtherMemoryProvider.class);
    }

    @Test
    @DisplayName("-Dlatchkey.provider naming a class that is not there: the message lists what is")
    void chosenMissing() throws IOException {
        ClassLoader loader = loaderWith(InMemoryProvider.class);
        assertThatThrownBy(() -> ProviderDiscovery.find("memory", loader, "com.example.Nope"))
                .isInstanceOf(LockException.class)
                .hasMessage("-Dlatchkey.provider=com.example.Nope names no Latchkey provider on the class path;"
                        + " found: io.latchkey.memory.InMemoryProvider (schemes memory)");
    }

    @Test
    @DisplayName("LockClient.connect without any provider fails, never falls back to a lock that does nothing")
    void connectWithoutProvider() throws IOException {
        ClassLoader loader = loaderWith();
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            assertThatThrownBy(() -> LockClient.connect(URI.create("zookeeper://localhost:2181/locks"), LockOptions.defaults()))
                    .isInstanceOf(LockException.class)
                    .hasMessageContaining("io.latchkey:lock-zookeeper");
        } finally {
            thread.setContextClassLoader(before);
        }
    }
}
