package io.gma.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * How a long-running command waits: until its duration passes, Ctrl-C (SIGINT) or SIGTERM, then everything is
 * closed, and the command ends with the status of that stop.
 *
 * <p>Left to the JVM, a signal runs the shutdown hooks and exits 128 + the signal's number (130, 143), which
 * a service manager counts as a failure. So while a command runs here, SIGINT and SIGTERM are taken
 * ({@code sun.misc.Signal}): the first starts the clean stop on the command's own thread, and the process
 * exits as the command returns, 0 after a clean stop; a second one, for a stop that takes too long, halts the
 * process at once with 128 + its number. Other ways out (SIGHUP, {@code System.exit}) still run a shutdown
 * hook that holds the JVM up to 10 s for the stop.
 */
public final class Running {
    private static final Logger LOG = LoggerFactory.getLogger(Running.class);
    private static final List<String> SIGNALS = List.of("INT", "TERM");

    /** The threads of the commands running here (tests run several in one JVM); guarded by Running.class. */
    private static final List<Thread> RUNNING = new ArrayList<>();
    /** Those of RUNNING that are closing their parts, not to be interrupted; guarded by Running.class. */
    private static final List<Thread> CLOSING = new ArrayList<>();
    /** The handlers ours replaced, while RUNNING is not empty; guarded by Running.class. */
    private static final Map<Signal, SignalHandler> PREVIOUS = new LinkedHashMap<>();
    /** Whether a signal has started the stop; guarded by Running.class. */
    private static boolean stopping;

    private Running() {
    }

    /** What a command runs while it waits; it may throw to end the wait early. */
    public interface Work {
        void run() throws Exception;
    }

    /**
     * Takes the signals, says the command is ready ({@code ready}, which prints its first line, or null), runs
     * {@code work} (a loop that ends by interruption, or null to just wait) for {@code seconds} (0: until Ctrl-C
     * or SIGTERM), then closes {@code parts}, the last first. A signal once {@code ready} has run always gets the
     * clean stop: a script that waits for the first line may stop the command at once. A part whose close throws
     * is named in a line on standard error ({@code gma: stopping: ...}) and makes the stop a failure.
     *
     * @return {@link Cli#OK} when every part closed, {@link Cli#FAILED} when one did not
     * @throws Exception what {@code work} threw, other than the interruption that stops it
     */
    public static int until(long seconds, Runnable ready, Work work, AutoCloseable... parts) throws Exception {
        CountDownLatch closed = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Thread hook = new Thread(() -> {
            main.interrupt();
            try {
                closed.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "gma-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        enter(main);
        int status = Cli.OK;
        try {
            if (ready != null) {
                ready.run();
            }
            if (work != null) {
                work.run();
            } else if (seconds > 0) {
                Thread.sleep(Duration.ofSeconds(seconds).toMillis());
            } else {
                new CountDownLatch(1).await();
            }
        } catch (InterruptedException stopped) {
            Thread.interrupted(); // closing below must not be interrupted in turn
        } finally {
            closing(main); // a signal from now on does not interrupt the closing below
            Thread.interrupted(); // one that came before, after the work ended, neither
            for (int i = parts.length - 1; i >= 0; i--) {
                try {
                    if (parts[i] != null) {
                        parts[i].close();
                    }
                } catch (Exception e) {
                    System.err.println("gma: stopping: " + e.getMessage());
                    status = Cli.FAILED;
                }
            }
            leave(main);
            closed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // SIGHUP or System.exit: the JVM is on its way out, and the hook sees everything closed
            }
        }
        return status;
    }

    /** Counts {@code main} in, taking the signals for the first command to run. */
    private static synchronized void enter(Thread main) {
        if (RUNNING.isEmpty()) {
            for (String name : SIGNALS) {
                try {
                    Signal signal = new Signal(name);
                    PREVIOUS.put(signal, Signal.handle(signal, Running::signalled));
                } catch (IllegalArgumentException taken) {
                    // -Xrs, or the VM keeps it: the JVM's own handling (exit 128 + the number) stays
                    LOG.debug("SIG{} stays with the JVM: {}", name, taken.getMessage());
                }
            }
        }
        RUNNING.add(main);
    }

    /** Marks {@code main} as closing its parts: a signal no longer interrupts it. */
    private static synchronized void closing(Thread main) {
        CLOSING.add(main);
    }

    /** Counts {@code main} out, giving the signals back after the last command. */
    private static synchronized void leave(Thread main) {
        RUNNING.remove(main);
        CLOSING.remove(main);
        if (RUNNING.isEmpty()) {
            PREVIOUS.forEach(Signal::handle);
            PREVIOUS.clear();
            stopping = false;
        }
    }

    /** On a signal's own thread: the first starts the stop, a second ends the process now. */
    private static void signalled(Signal signal) {
        synchronized (Running.class) {
            if (!stopping) {
                stopping = true;
                LOG.info("SIG{}: stopping (another SIGINT or SIGTERM stops at once)", signal.getName());
                RUNNING.stream().filter(t -> !CLOSING.contains(t)).forEach(Thread::interrupt);
                return;
            }
        }
        LOG.warn("SIG{} again: stopping at once, before the stop has finished; exit status {}", signal.getName(),
                128 + signal.getNumber());
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(128 + signal.getNumber());
    }
}
