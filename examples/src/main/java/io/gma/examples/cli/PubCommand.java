package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.Running;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.wire.Name;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code gma pub NAME [DATA...]}: a producer registered as exactly NAME@DOMAIN that publishes each DATA, or each
 * line of stdin, to its subscribers, then waits until they acknowledged everything. Exit 0 when every message went
 * to a subscriber and was acknowledged (with {@code --subscribers 0}, when none failed); 1 when one failed, or when
 * the subscribers did not come within --wait.
 */
@Command(name = "pub", mixinStandardHelpOptions = true,
        header = "Publishes data, or each line of stdin, as a producer.",
        description = "A producer registered as exactly NAME@DOMAIN (gma sub NAME@DOMAIN and gma tail follow it)"
                + " that publishes each DATA, or each line of stdin until it ends, as one message to its subscribers."
                + " Before the first, it waits for --subscribers of them; at the end, until they acknowledged"
                + " everything. A count on stderr; exit 0 when every message reached a subscriber, 1 when not.")
final class PubCommand implements Callable<Integer> {
    /** How long the end waits for acknowledgements. */
    private static final long ACKNOWLEDGED_WITHIN_SECONDS = 30;

    @Parameters(index = "0", paramLabel = "NAME", description = "Its label: it registers as NAME@DOMAIN (NAME@DOMAIN"
            + " is taken too, with the domain of --domain).")
    String name;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "DATA", description = "The messages, one each; without"
            + " any, each line of stdin is one.")
    List<String> data;

    @Option(names = "--subscribers", paramLabel = "N", defaultValue = "1",
            description = "Subscribers to wait for before the first message (default ${DEFAULT-VALUE}); 0 does not"
                    + " wait.")
    int subscribers;

    @Option(names = "--wait", paramLabel = "SECONDS",
            description = "How long to wait for them; 0 waits as long as it takes (default 30 with DATA; reading"
                    + " stdin, as long as it takes, stdin waiting in its pipe meanwhile).")
    BigDecimal wait;

    @Mixin
    EndpointOptions endpoint;

    @Spec
    CommandLine.Model.CommandSpec spec;

    private final AtomicLong published = new AtomicLong();
    private final AtomicLong toNobody = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();

    @Override
    public Integer call() throws Exception {
        String label = label();
        Cli.check(spec, subscribers >= 0, "--subscribers " + subscribers + " is negative");
        if (wait == null) {
            wait = data != null && !data.isEmpty() ? BigDecimal.valueOf(30) : BigDecimal.ZERO;
        }
        Cli.check(spec, wait.signum() >= 0, "--wait " + wait.toPlainString() + " is negative");
        PrintWriter err = spec.commandLine().getErr();
        Producer producer = endpoint.apply(Producer.builder(), spec).label(label).exactLabel(true).build();
        int[] status = {0};
        int stopped = Running.until(0, () -> {
            err.println("pub is " + producer.name());
            err.flush();
        }, () -> status[0] = publish(producer, err), producer);
        return stopped != 0 ? stopped : status[0];
    }

    /** NAME's label, checked. */
    private String label() {
        int at = name.indexOf('@');
        String label = at < 0 ? name : name.substring(0, at);
        Cli.check(spec, at < 0 || name.substring(at + 1).equals(endpoint.domain), "NAME " + name + " is in domain "
                + name.substring(at + 1) + ", not --domain " + endpoint.domain + ": give --domain "
                + name.substring(at + 1));
        Cli.check(spec, Name.isLabel(label), "NAME " + name + ": the label \"" + label + "\" is not "
                + Name.LABEL_RULE);
        return label;
    }

    /** Waits for the subscribers, publishes, waits for the acknowledgements; the counts, also when stopped. */
    private int publish(Producer producer, PrintWriter err) {
        String why = null;
        try {
            if (!subscribed(producer)) {
                err.printf("pub: %d subscribers wanted, %d came within %s s: nothing was published (gma sub %s, or"
                        + " a gma tail that names it, subscribes)%n", subscribers, producer.subscribers().size(),
                        wait.toPlainString(), producer.name());
                return 1;
            }
            BlockingQueue<Optional<String>> lines = data != null && !data.isEmpty() ? null : stdin();
            int next = 0;
            for (String message = next(lines, next++); message != null; message = next(lines, next++)) {
                publishOne(producer, message.getBytes(StandardCharsets.UTF_8));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ACKNOWLEDGED_WITHIN_SECONDS);
            while (unanswered() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            why = unanswered() > 0 ? "not acknowledged within " + ACKNOWLEDGED_WITHIN_SECONDS + " s" : null;
        } catch (InterruptedException stopped) {
            why = "stopped" + (unanswered() > 0 ? " before they were acknowledged" : "");
        }
        long unanswered = unanswered();
        err.printf("pub: %d published, %d acknowledged by subscribers, %d to no subscriber, %d failed%s%n",
                published.get(), acknowledged.get(), toNobody.get(), failed.get() + unanswered,
                firstFailure.get() != null ? " (" + firstFailure.get() + ")" : why != null ? " (" + why + ")" : "");
        err.flush();
        return failed.get() + unanswered == 0 && (subscribers == 0 || toNobody.get() == 0)
                && (published.get() > 0 || why == null) ? 0 : 1;
    }

    /** The next message: DATA's {@code index}th, or stdin's next line; null at the end. */
    private String next(BlockingQueue<Optional<String>> lines, int index) throws InterruptedException {
        return lines == null ? (index < data.size() ? data.get(index) : null) : lines.take().orElse(null);
    }

    /** Messages published to a subscriber whose acknowledgement (or failure) has not come yet. */
    private long unanswered() {
        return published.get() - toNobody.get() - acknowledged.get() - failed.get();
    }

    /** Whether --subscribers came within --wait. */
    private boolean subscribed(Producer producer) throws InterruptedException {
        long waitNanos = wait.movePointRight(9).longValue();
        long start = System.nanoTime();
        while (producer.subscribers().size() < subscribers) {
            if (waitNanos > 0 && System.nanoTime() - start >= waitNanos) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    private void publishOne(Producer producer, byte[] message) {
        published.incrementAndGet();
        List<Sent> sent = producer.publish(message);
        if (sent.isEmpty()) {
            toNobody.incrementAndGet();
            return;
        }
        // a message counts once: acknowledged when every subscriber acknowledged it, failed when one did not
        CompletableFuture.allOf(sent.stream().map(Sent::acknowledged).toArray(CompletableFuture[]::new))
                .whenComplete((ok, e) -> {
                    if (e == null) {
                        acknowledged.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        firstFailure.compareAndSet(null, cause.getMessage());
                    }
                });
    }

    /**
     * Stdin's lines, read by a thread of their own so that Ctrl-C (an interrupt) ends the wait for the next one;
     * an empty value at the end.
     */
    private static BlockingQueue<Optional<String>> stdin() {
        BlockingQueue<Optional<String>> lines = new ArrayBlockingQueue<>(1024);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.put(Optional.of(line));
                }
                lines.put(Optional.empty());
            } catch (IOException unreadable) {
                lines.offer(Optional.empty()); // the end of stdin all the same; a full queue ends at Ctrl-C
            } catch (InterruptedException stopping) {
                Thread.currentThread().interrupt();
            }
        }, "gma-pub-stdin");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }
}
