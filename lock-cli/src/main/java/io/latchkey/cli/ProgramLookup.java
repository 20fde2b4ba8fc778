package io.latchkey.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * Whether a command's program can run, asked before it starts: the command starts through a shell
 * ({@link Watchdog#wrap}), so an exec that fails would be that shell's, with its message; this says it in
 * latchkey's words and exit codes instead. It looks as {@code execvp} does: a name with a slash as a
 * path, else each directory of {@code PATH} in order (an empty entry being the working directory); a
 * name found only without the execute permission is "not executable". Stateless and thread-safe.
 */
final class ProgramLookup {

    private ProgramLookup() {
    }

    /**
     * Empty if {@code program} can be executed; else {@link ExitCodes#NOT_FOUND} or
     * {@link ExitCodes#NOT_EXECUTABLE}.
     */
    static OptionalInt problem(String program, String pathVariable) {
        if (program.isEmpty()) {
            return OptionalInt.of(ExitCodes.NOT_FOUND);
        }
        if (program.contains("/")) {
            return problem(Path.of(program));
        }
        boolean foundUnexecutable = false;
        String path = pathVariable == null ? "/usr/bin:/bin" : pathVariable;
        for (String entry : path.split(":", -1)) {
            OptionalInt p = problem(Path.of(entry.isEmpty() ? "." : entry).resolve(program));
            if (p.isEmpty()) {
                return p;
            }
            foundUnexecutable |= p.getAsInt() == ExitCodes.NOT_EXECUTABLE;
        }
        return OptionalInt.of(foundUnexecutable ? ExitCodes.NOT_EXECUTABLE : ExitCodes.NOT_FOUND);
    }

    private static OptionalInt problem(Path file) {
        if (!Files.exists(file)) {
            return OptionalInt.of(ExitCodes.NOT_FOUND);
        }
        // execve refuses a directory with EACCES too
        return Files.isRegularFile(file) && Files.isExecutable(file)
                ? OptionalInt.empty() : OptionalInt.of(ExitCodes.NOT_EXECUTABLE);
    }
}
