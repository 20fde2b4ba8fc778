package io.latchkey.cli.demo;

/**
 * One line a {@link DemoWorker} reported: who, what, when (its {@code System.nanoTime()}), with which
 * token, and a value whose meaning depends on the kind (a validity deadline, the store's highest token).
 */
record Event(String worker, String kind, long nanos, long token, long value) {

    /** Parses {@code EV worker kind nanos token value}, or returns null for any other line. */
    static Event parse(String line) {
        String[] p = line.split(" ");
        if (p.length != 6 || !p[0].equals("EV")) {
            return null;
        }
        try {
            return new Event(p[1], p[2], Long.parseLong(p[3]), Long.parseLong(p[4]), Long.parseLong(p[5]));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
