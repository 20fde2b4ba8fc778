package io.latchkey.internal;

/** Local state of one lock name in this client. */
final class LocalLock {
    final String name;
    final java.util.concurrent.Semaphore gate = new java.util.concurrent.Semaphore(1, true);
    int refs; // guarded by the map's compute
    Grant grant; // guarded by this
    Thread owner; // guarded by this; null for a lease acquired asynchronously

    LocalLock(String name) {
        this.name = name;
    }
}
