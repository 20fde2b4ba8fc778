package io.latchkey.cli.demo;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder. */
@Command(name = "demo")
public final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        return 0;
    }
}
