package io.latchkey.internal;

import io.latchkey.LockException;
import io.latchkey.spi.LockProviderFactory;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Finds the one provider for a URI scheme with {@link ServiceLoader}. None, or several, is an error
 * that says what to do: a lock that silently does nothing is the worst outcome, so there is no
 * fallback.
 */
final class ProviderDiscovery {

    /** The system property that names the provider class to use when several serve a scheme. */
    public static final String PROVIDER_PROPERTY = "latchkey.provider";

    static final String ARTIFACTS =
            "io.latchkey:lock-redis, io.latchkey:lock-zookeeper, io.latchkey:lock-etcd or io.latchkey:lock-kafka";

    private ProviderDiscovery() {
    }

    /**
     * Returns the provider for {@code scheme} among those {@code loader} finds.
     *
     * @param chosen the class name from {@code -Dlatchkey.provider}, or {@code null}
     */
    public static LockProviderFactory find(String scheme, ClassLoader loader, String chosen) {
        List<LockProviderFactory> all = LockProviderFactory.installed(loader);
        if (chosen != null && !chosen.isBlank()) {
            for (LockProviderFactory p : all) {
                if (p.getClass().getName().equals(chosen.trim())) {
                    if (!p.schemes().contains(scheme)) {
                        throw new LockException(null, "-D" + PROVIDER_PROPERTY + "=" + chosen + " serves the schemes "
                                + p.schemes() + ", not '" + scheme + "'; use one of those schemes or choose another provider");
                    }
                    return p;
                }
            }
            throw new LockException(null, "-D" + PROVIDER_PROPERTY + "=" + chosen + " names no Latchkey provider on the"
                    + " class path; found: " + (all.isEmpty() ? "none" : describe(all)));
        }
        if (all.isEmpty()) {
            throw new LockException(null, "no Latchkey provider on the class path for scheme '" + scheme
                    + "': add one of the artifacts " + ARTIFACTS);
        }
        List<LockProviderFactory> matching = all.stream().filter(p -> p.schemes().contains(scheme)).collect(Collectors.toList());
        if (matching.isEmpty()) {
            throw new LockException(null, "no Latchkey provider for scheme '" + scheme + "'; the class path has "
                    + describe(all) + ". Use one of their schemes, or add one of the artifacts " + ARTIFACTS);
        }
        if (matching.size() > 1) {
            throw new LockException(null, "several Latchkey providers serve scheme '" + scheme + "': " + describe(matching)
                    + ". Keep one of them on the class path, or choose one with -D" + PROVIDER_PROPERTY + "=<class name>");
        }
        return matching.get(0);
    }

    private static String describe(List<LockProviderFactory> providers) {
        return providers.stream()
                .map(p -> p.getClass().getName() + " (schemes " + String.join(", ", new java.util.TreeSet<>(p.schemes())) + ")")
                .collect(Collectors.joining(", "));
    }
}
