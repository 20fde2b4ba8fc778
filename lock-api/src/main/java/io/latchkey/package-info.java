/**
 * Latchkey's public API: {@link io.latchkey.LockClient}, {@link io.latchkey.DistributedLock},
 * {@link io.latchkey.Lease}, {@link io.latchkey.LockOptions} and the exceptions. It names no backend
 * type; the backend is chosen by the artifact on the class path and the URI's scheme.
 */
package io.latchkey;
