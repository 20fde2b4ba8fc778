package io.latchkey.cli;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.spi.LockProviderFactory;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the command line finds its backend: {@code --uri} or {@code LATCHKEY_URI}, checked against
 * the providers in the jar before connecting, so that each bad input is one line and one exit code.
 *
 * <p>Stateless and thread-safe.
 */
public final class Backends {

    /** The environment variable read when {@code --uri} is not given. */
    public static final String URI_VARIABLE = "LATCHKEY_URI";

    /** One URI per backend, shown whenever a URI is missing or wrong. */
    public static final String EXAMPLES = "redis://localhost:6379, zookeeper://localhost:2181/latchkey,"
            + " etcd://localhost:2379, kafka://localhost:9092 (options in the query: ?lease=15s&timeout=5s)";

    private Backends() {
    }

    /**
     * Connects with the URI given on the command line or in the environment.
     *
     * @throws CliException with {@link ExitCodes#USAGE} for a missing or bad URI or an unknown backend,
     *     with {@link ExitCodes#BACKEND_UNAVAILABLE} if the backend cannot be reached
     */
    public static LockClient connect(String uri) {
        String chosen = uri != null ? uri : System.getenv(URI_VARIABLE);
        if (chosen == null || chosen.isBlank()) {
            throw new CliException(ExitCodes.USAGE, "no backend: give --uri or set " + URI_VARIABLE + ", for example "
                    + EXAMPLES);
        }
        int colon = chosen.indexOf("://");
        if (colon <= 0) {
            throw new CliException(ExitCodes.USAGE, "bad lock URI '" + redact(chosen) + "': write it as scheme://host:port,"
                    + " for example " + EXAMPLES);
        }
        String scheme = chosen.substring(0, colon).toLowerCase(Locale.ROOT);
        Set<String> known = schemes();
        if (!known.contains(scheme)) {
            throw new CliException(ExitCodes.USAGE, "unknown backend '" + scheme + "' in lock URI '" + redact(chosen)
                    + "': this latchkey knows " + String.join(", ", known) + ", for example " + EXAMPLES);
        }
        try {
            return LockClient.connect(chosen);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (LockBackendUnavailableException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        } catch (LockException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, "cannot connect to " + redact(chosen) + ": " + e.getMessage());
        }
    }

    /** The schemes the providers in this jar serve. */
    static Set<String> schemes() {
        Set<String> schemes = new TreeSet<>();
        for (LockProviderFactory f : ServiceLoader.load(LockProviderFactory.class)) {
            schemes.addAll(f.schemes());
        }
        return schemes;
    }

    /** The URI with the password of its user info replaced by {@code ****}, as the library shows it. */
    public static String redact(String uri) {
        return uri.replaceFirst("(//[^/@:?#]*:)[^/@?#]*@", "$1****@");
    }

    /** The URI in effect: {@code --uri} or the environment, or {@code null}. */
    static String chosen(String uri) {
        return uri != null ? uri : System.getenv(URI_VARIABLE);
    }
}
