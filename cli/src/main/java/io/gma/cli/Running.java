package io.gma.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** How a long-running command waits: until its duration passes or Ctrl-C, then everything is closed. */
public final class Running {
    private Running() {
    }

    /** What a command runs while it waits; it may throw to end the wait early. */
    public interface Work {
        void run() throws Exception;
    }

    /**
     * Runs {@code work} (a loop that ends by interruption, or null to just wait), for {@code seconds} (0: until
     * Ctrl-C), then closes {@code parts}, the last first; on Ctrl-C the JVM exits only once they are closed.
     */
    public static void until(long seconds, Work work, AutoCloseable... parts) throws Exception {
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
        try {
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
            for (int i = parts.length - 1; i >= 0; i--) {
                try {
                    if (parts[i] != null) {
                        parts[i].close();
                    }
                } catch (Exception e) {
                    System.err.println("gma: stopping: " + e.getMessage());
                }
            }
            closed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the JVM is on its way out, and the hook sees everything closed
            }
        }
    }
}
