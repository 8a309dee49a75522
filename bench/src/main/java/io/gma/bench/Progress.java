package io.gma.bench;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress bar per stage on standard error: redrawn in place on a terminal, one line per step otherwise (a CI
 * log, a pipe), nothing at all when given no stream.
 *
 * <pre>
 * fig 4-5 ping-pong  [##########----------]  12/20  NATS request/reply, 1024 B         0:41
 * </pre>
 */
final class Progress {
    private static final int WIDTH = 24;

    private final PrintStream out;
    private final boolean terminal;
    private String stage = "";
    private int steps;
    private int done;
    private long stageStart;

    /** @param out where to draw, or null for silence; {@code terminal}: redraw in place with carriage returns */
    Progress(PrintStream out, boolean terminal) {
        this.out = out;
        this.terminal = terminal;
    }

    /** Starts a stage of {@code steps} steps. */
    void stage(String name, int steps) {
        this.stage = name;
        this.steps = Math.max(1, steps);
        this.done = 0;
        this.stageStart = System.nanoTime();
        draw("starting");
    }

    /** About to measure {@code what}: draws the bar with the steps done so far. */
    void step(String what) {
        draw(what);
        done = Math.min(steps, done + 1);
    }

    /** The stage is over: a full bar, and a new line. */
    void finish() {
        done = steps;
        draw("done");
        if (out != null && terminal) {
            out.println();
        }
    }

    /** A message between the bars (a peer skipped, a file written). */
    void say(String line) {
        if (out != null) {
            out.println(terminal ? "\r" + line + " ".repeat(20) : line);
        }
    }

    private void draw(String what) {
        if (out == null) {
            return;
        }
        int filled = WIDTH * done / steps;
        long seconds = (System.nanoTime() - stageStart) / 1_000_000_000L;
        String line = String.format(Locale.ROOT, "%-22s [%s%s] %3d/%-3d %-40.40s %d:%02d", stage, "#".repeat(filled),
                "-".repeat(WIDTH - filled), done, steps, what, seconds / 60, seconds % 60);
        if (terminal) {
            out.print("\r" + line);
            out.flush();
        } else {
            out.println(line);
        }
    }
}
