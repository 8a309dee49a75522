package io.gma.client;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A producer with an outbox in a JVM of its own, for {@link OutboxCrashTest}: it streams numbered messages (a long
 * each) to one destination, flat out, printing each number once its send returned, until it is killed; or, given
 * a count, sends that many, waits until they are acknowledged, and holds the outbox until its input ends.
 *
 * <pre>OutboxProducerMain REGISTRY_URL OUTBOX_DIR LABEL DESTINATION FIRST COUNT [PC_UPLINK DOMAIN]</pre>
 *
 * <p>COUNT 0: until killed.
 *
 * <p>Output: {@code ready NAME recovered=N}, {@code sent N} for each send that returned, and {@code done STATS}
 * after a count.
 */
final class OutboxProducerMain {
    private OutboxProducerMain() {
    }

    public static void main(String[] args) throws Exception {
        long first = Long.parseLong(args[4]);
        long count = Long.parseLong(args[5]);
        EndpointBuilder<Producer> b = Producer.builder().registry(args[0]).domain(args.length > 7 ? args[7] : "lan")
                .label(args[2]).exactLabel(true).outbox(Path.of(args[1])).blockTimeout(Duration.ofSeconds(60));
        if (args.length > 6) {
            b.pcServlet(args[6]);
        }
        try (Producer p = b.build()) {
            System.out.println("ready " + p.name() + " recovered=" + p.stats().outboxRecovered());
            String to = args[3];
            Sent last = null;
            for (long n = first; count == 0 || n < first + count; n++) {
                last = p.send(to, ByteBuffer.allocate(8).putLong(n).array());
                System.out.println("sent " + n);
            }
            // one peer acknowledges in order: the last one acknowledged, all were, those sent again first included
            last.acknowledged().get(60, TimeUnit.SECONDS);
            System.out.println("done " + p.stats());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // holds the outbox until its input ends
            }
        }
    }
}
