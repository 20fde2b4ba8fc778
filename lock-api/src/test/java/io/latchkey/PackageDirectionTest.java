package io.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.spi.LockUri;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * lock-api's packages depend in one direction: {@code io.latchkey.internal} builds on
 * {@code io.latchkey.spi}, never the reverse, so that what backends compile against carries none of the
 * shared layer. Read from the compiled classes: a class's constant pool names every class it uses.
 */
class PackageDirectionTest {

    private static final String INTERNAL = "io/latchkey/internal/";

    @Test
    @DisplayName("no class of io.latchkey.spi names a class of io.latchkey.internal")
    void spiNeverUsesInternal() {
        List<Path> spi = classes("io/latchkey/spi");
        assertThat(spi).as("compiled classes of io.latchkey.spi").hasSizeGreaterThan(10);
        assertThat(spi.stream().filter(PackageDirectionTest::namesInternal).map(Path::getFileName).map(Path::toString))
                .as("spi classes that name io.latchkey.internal").isEmpty();
    }

    @Test
    @DisplayName("the scan sees a use where there is one: LockClient's connect goes through internal's Connector")
    void scanSeesAUse() {
        assertThat(namesInternal(root().resolve("io/latchkey/LockClient.class"))).isTrue();
    }

    @Test
    @DisplayName("LockResult has no public constructor and no public way to build one")
    void lockResultIsBuiltOnlyByTheSharedLayer() {
        assertThat(Arrays.stream(LockResult.class.getConstructors()).map(Constructor::toString)).isEmpty();
        assertThat(Arrays.stream(LockResult.class.getMethods())
                .filter(m -> Modifier.isStatic(m.getModifiers()) && LockResult.class.isAssignableFrom(m.getReturnType()))
                .map(Method::getName)).as("public static methods returning a LockResult").isEmpty();
    }

    private static boolean namesInternal(Path classFile) {
        try {
            return new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1).contains(INTERNAL);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> classes(String packagePath) {
        try (Stream<Path> files = Files.list(root().resolve(packagePath))) {
            return files.filter(p -> p.toString().endsWith(".class")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The folder of lock-api's compiled main classes. */
    private static Path root() {
        try {
            return Path.of(LockUri.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
