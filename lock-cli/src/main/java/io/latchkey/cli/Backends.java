package io.latchkey.cli;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.spi.LockUri;
import java.util.Set;

/**
 * Where the command line finds its backend: {@code --uri} or {@code LATCHKEY_URI}, connected through
 * {@link LockClient#connect(String)}, whose messages (with the password redacted) it shows as they are;
 * only a scheme that no provider in the jar serves is told in the command line's own words, as a usage
 * error. Each bad input is one line and one exit code.
 *
 * <p>Stateless and thread-safe.
 */
public final class Backends {

    /** The environment variable read when {@code --uri} is not given. */
    public static final String URI_VARIABLE = "LATCHKEY_URI";

    /** One URI per backend, shown whenever a URI is missing or wrong. */
    public static final String EXAMPLES = "redis://localhost:6379, zookeeper://localhost:2181/latchkey,"
            + " etcd://localhost:2379, kafka://localhost:9092, postgresql://user:password@localhost:5432/database,"
            + " mariadb://user:password@localhost:3306/database (or mysql://)"
            + " (options in the query: ?lease=15s&timeout=5s)";

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
        Set<String> known;
        String scheme;
        try {
            scheme = LockUri.schemeOf(chosen);
            known = LockUri.servedSchemes();
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (LockException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        }
        // the library calls a scheme without a provider a failure of the class path; here it is a typing error
        if (!known.contains(scheme)) {
            throw new CliException(ExitCodes.USAGE, "unknown backend '" + scheme + "' in lock URI '"
                    + LockUri.redact(chosen) + "': this latchkey knows " + String.join(", ", known)
                    + ", for example " + EXAMPLES);
        }
        try {
            return LockClient.connect(chosen);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (LockBackendUnavailableException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        } catch (LockException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, "cannot connect to " + LockUri.redact(chosen)
                    + ": " + e.getMessage());
        }
    }

    /** The URI in effect: {@code --uri} or the environment, or {@code null}. */
    static String chosen(String uri) {
        return uri != null ? uri : System.getenv(URI_VARIABLE);
    }
}
