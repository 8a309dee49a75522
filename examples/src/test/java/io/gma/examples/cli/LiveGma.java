package io.gma.examples.cli;

import static org.awaitility.Awaitility.await;

import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A gma command running on a thread of its own in this JVM, what it prints readable while it runs. */
final class LiveGma {
    final StringBuffer out = new StringBuffer();
    final StringBuffer err = new StringBuffer();
    final CompletableFuture<Integer> status = new CompletableFuture<>();
    final Thread thread;

    LiveGma(String... args) {
        thread = new Thread(() -> status.complete(Gma.run(args, writer(out), writer(err))), "gma-" + args[0]);
        thread.start();
    }

    private static PrintWriter writer(StringBuffer to) {
        return new PrintWriter(new Writer() {
            @Override
            public void write(char[] chars, int off, int len) {
                to.append(chars, off, len);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        }, true);
    }

    /** Waits until stdout shows {@code part}. */
    void awaitOut(String part) {
        awaitIn(out, part);
    }

    /** Waits until stderr shows {@code part}. */
    void awaitErr(String part) {
        awaitIn(err, part);
    }

    private void awaitIn(StringBuffer text, String part) {
        await(part).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                .failFast("the command ended: " + out + err, status::isDone).until(() -> text.indexOf(part) >= 0);
    }

    /** Its exit status, once it ended (at most 30 s from now). */
    int exit() throws Exception {
        return status.get(30, TimeUnit.SECONDS);
    }

    /** What the user would do with Ctrl-C: the shutdown hook interrupts the command's thread. */
    int interrupt() throws Exception {
        thread.interrupt();
        return exit();
    }
}
