package io.latchkey.etcd;

import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;

/** Turns jetcd and gRPC failures into the exceptions of the API. Stateless. */
final class EtcdErrors {

    private EtcdErrors() {
    }

    /**
     * The API's exception for a failed call, with advice that fits the cause: TLS, authentication,
     * permission, a refused connection, a host that does not resolve, and an etcd that is unavailable
     * each get their own. Messages quote {@code where} (the URI, password redacted) once.
     *
     * @param subject {@code "lock 'name' (etcd key prefix '...'): "}, or empty while connecting
     */
    static LockException translate(String lockName, String subject, String what, Throwable cause, String where,
            String user, String namespace) {
        Status.Code code = code(cause);
        String message = message(cause);
        for (Throwable c = cause; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof javax.net.ssl.SSLException || c instanceof java.security.cert.CertificateException) {
                return new LockException(lockName, subject + "the TLS handshake with etcd at " + where + " failed while "
                        + what + " (" + message + "); check that the server's certificate is signed by a CA in the '"
                        + EtcdLockProvider.CACERT + "' option (or the JVM's trust store) and names the host connected to",
                        cause);
            }
        }
        if (code == Status.Code.UNAUTHENTICATED || message.contains("authentication failed")) {
            Status.Code inner = innerCode(cause);
            if (inner != Status.Code.UNAVAILABLE && inner != Status.Code.DEADLINE_EXCEEDED) {
                return new LockException(lockName, subject + "authentication failed for etcd user '" + user + "' at "
                        + where + " (" + message + "); check the user name and password", cause);
            }
            code = inner; // the authentication request itself could not reach etcd
        }
        if (code == Status.Code.PERMISSION_DENIED) {
            return new LockException(lockName, subject + "etcd user '" + user + "' has no permission at " + where
                    + " for " + what + " (" + message + "); grant its role readwrite on the prefix '" + namespace + "'",
                    cause);
        }
        if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.CANCELLED) {
            return new LockBackendUnavailableException(lockName, subject + unreachable(cause, where, what, message), cause);
        }
        return new LockException(lockName, subject + what + " at etcd " + where + " failed: " + message, cause);
    }

    /** Why etcd could not be reached, from the deepest cause: refused, not resolved, or unavailable. */
    static String unreachable(Throwable cause, String where, String what, String message) {
        for (Throwable c = cause; c != null; c = c.getCause()) {
            String text = String.valueOf(c.getMessage());
            if (c instanceof java.net.UnknownHostException || c instanceof java.nio.channels.UnresolvedAddressException
                    || text.startsWith("Unable to resolve host") || text.contains("unresolved address")) {
                return "the host of etcd at " + where + " does not resolve (" + message + ") while " + what
                        + "; check the host name in the URI";
            }
            if (c instanceof java.net.ConnectException && text.contains("refused")) {
                return "nothing accepts connections at " + where + " (connection refused) while " + what
                        + "; check that etcd runs there and listens on that port";
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return "etcd at " + where + " is unavailable while " + what + " (" + message + "); check that it runs and is"
                + " reachable";
    }

    /** The gRPC status code of a failure, looking through wrappers. */
    static Status.Code code(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof EtcdException) {
                return Status.Code.valueOf(((EtcdException) c).getErrorCode().name());
            }
            Status s = Status.fromThrowable(c);
            if (s.getCode() != Status.Code.UNKNOWN) {
                return s.getCode();
            }
        }
        return Status.Code.UNKNOWN;
    }

    /** The code of the deepest status in the chain: what an authentication attempt itself ran into. */
    private static Status.Code innerCode(Throwable t) {
        Status.Code last = Status.Code.UNKNOWN;
        for (Throwable c = t; c != null; c = c.getCause()) {
            Status.Code code = c instanceof EtcdException
                    ? Status.Code.valueOf(((EtcdException) c).getErrorCode().name())
                    : Status.fromThrowable(c).getCode();
            if (code != Status.Code.UNKNOWN) {
                last = code;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return last;
    }

    static String message(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null && b.length() < 500; c = c.getCause()) {
            if (c.getMessage() != null && b.indexOf(c.getMessage()) < 0) {
                b.append(b.length() == 0 ? "" : ": ").append(c.getMessage());
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return b.length() == 0 ? String.valueOf(t) : b.toString();
    }
}
