package io.gma.cli;

import picocli.CommandLine.Option;

/** How long a long-running command runs. */
public final class DurationOption {
    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "0",
            description = "Stop after this many seconds; 0 runs until Ctrl-C.")
    long seconds;

    /** The seconds given; 0: until Ctrl-C. */
    public long seconds() {
        return seconds;
    }
}
