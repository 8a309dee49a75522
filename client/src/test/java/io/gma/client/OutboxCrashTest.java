package io.gma.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer with an outbox, in a JVM of its own, killed with SIGKILL mid-stream and started again with the same
 * outbox and exact name, three times: of every number whose {@code send} returned, none is lost and none is
 * delivered twice. The messages a killed run had not had acknowledged go out again from the outbox with their
 * sequence numbers, and the consumer's dedup drops those it had.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class OutboxCrashTest {
    private static final int KILLS = 3;
    private static final Pattern SENT = Pattern.compile("sent (\\d+)");

    @TempDir
    Path tmp;

    /** How many times the consumer got each number. */
    static final class Tally {
        private final Map<Long, Integer> got = new HashMap<>();

        synchronized void add(long n) {
            got.merge(n, 1, Integer::sum);
        }

        synchronized Set<Long> missing(Set<Long> expected) {
            Set<Long> missing = new TreeSet<>(expected);
            missing.removeAll(got.keySet());
            return missing;
        }

        synchronized Set<Long> twice() {
            Set<Long> twice = new TreeSet<>();
            got.forEach((n, times) -> {
                if (times > 1) {
                    twice.add(n);
                }
            });
            return twice;
        }

        synchronized Set<Long> beyond(Set<Long> expected) {
            Set<Long> beyond = new TreeSet<>(got.keySet());
            beyond.removeAll(expected);
            return beyond;
        }
    }

    /** How many, and the first 20. */
    static String few(Set<Long> numbers) {
        return numbers.size() + " " + numbers.stream().limit(20).toList();
    }

    /** The numbers whose send returned, as the producer printed them. */
    static Set<Long> sentIn(String output) {
        Set<Long> sent = new TreeSet<>();
        for (String line : output.split("\n")) {
            Matcher m = SENT.matcher(line);
            if (m.matches()) {
                sent.add(Long.parseLong(m.group(1)));
            }
        }
        return sent;
    }

    @Test
    void aProducerKilledMidStreamLosesAndDuplicatesNothingWhoseSendReturned() throws Exception {
        Tally got = new Tally();
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("tally").exactLabel(true)
                        .onMessage(m -> got.add(ByteBuffer.wrap(m.data()).getLong())).build()) {
            String summary = killAndCount(f.registryUrl(), tmp.resolve("outbox"), "streamer@lan", sink, got, KILLS,
                    List.of());
            System.out.println("OutboxCrashTest, direct: " + summary);
        }
    }

    /**
     * Runs the producer {@code kills} times, each killed at a random moment mid-stream, and once more to the end,
     * all with {@code outbox}; then asserts that of every number whose send returned none was lost and none came
     * twice to {@code sink}, which counts them in {@code got}. Public for the same test across domains, in the PC
     * servlet's module.
     *
     * @param name the producer's exact name, {@code streamer@DOMAIN}
     * @param more the producer's arguments after the first six (its PC servlet's uplink and its domain)
     * @return what happened, a sentence
     */
    static String killAndCount(String registryUrl, Path outbox, String name, Consumer sink, Tally got, int kills,
            List<String> more) throws Exception {
        Random random = new Random();
        Set<Long> confirmed = new TreeSet<>();
        StringBuilder runs = new StringBuilder();
        long recovered = 0;
        for (int run = 0; run <= kills; run++) {
            long first = run * 10_000_000L;
            boolean last = run == kills;
            List<String> args = new ArrayList<>(List.of(registryUrl, outbox.toString(), "streamer", sink.name(),
                    Long.toString(first), last ? "1000" : "0"));
            args.addAll(more);
            try (ChildJvm child = ChildJvm.start(List.of("-Xmx128m"), OutboxProducerMain.class.getName(), args)) {
                Matcher ready = child.await(Pattern.compile("ready (\\S+) recovered=(\\d+)"), 30_000);
                assertEquals(name, ready.group(1));
                recovered += Long.parseLong(ready.group(2));
                if (last) {
                    child.await(Pattern.compile("done .*"), 60_000);
                } else {
                    // a moment that falls anywhere in the stream: mid-write, mid-fsync, between ACKs
                    child.await(Pattern.compile("sent " + (first + 2_000 + random.nextInt(8_000))), 60_000);
                    child.kill();
                }
                Set<Long> sent = sentIn(child.output());
                confirmed.addAll(sent);
                runs.append(" run ").append(run).append(": ").append(ready.group(2)).append(" recovered, ")
                        .append(sent.size()).append(" sent up to ")
                        .append(sent.isEmpty() ? "-" : Collections.max(sent)).append(';');
            }
        }
        try {
            // "done" came after the last send was acknowledged by the first hop; across domains, the rest of the
            // way takes a moment more
            await().atMost(Duration.ofSeconds(20)).until(() -> got.missing(confirmed).isEmpty());
        } catch (ConditionTimeoutException stillMissing) {
            // the assertions below say what is missing
        }
        Set<Long> lost = got.missing(confirmed);
        Set<Long> twice = got.twice();
        Set<Long> unconfirmed = got.beyond(confirmed);
        String summary = confirmed.size() + " sent, " + recovered + " recovered from the outbox after " + kills
                + " kills, " + sink.stats().duplicates() + " dropped by the consumer's dedup; lost " + few(lost)
                + ", twice " + few(twice) + ", arrived though their send never returned " + few(unconfirmed) + ";"
                + runs;
        assertTrue(lost.isEmpty(), summary);
        assertTrue(twice.isEmpty(), summary);
        // the one send under way when its JVM was killed may have been appended: it arrives, once
        assertTrue(unconfirmed.size() <= kills, summary);
        assertTrue(recovered > 0, "no kill left anything in the outbox: " + summary);
        return summary;
    }

    /**
     * A send that threw leaves nothing behind (docs/outbox.md), even when the process dies the moment after: its
     * sender may send it again, and the next start must not send it a second time.
     */
    @Test
    void aSendThatThrewIsNotSentAfterACrashTheMomentAfter() throws Exception {
        int unreachable;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            unreachable = s.getLocalPort(); // closed: nobody listens there
        }
        try (DirectFixture f = new DirectFixture()) {
            Path outbox = tmp.resolve("thrower");
            String output;
            try (ChildJvm child = ChildJvm.start(List.of("-Xmx128m"), OutboxThrowMain.class.getName(),
                    List.of(f.registryUrl(), outbox.toString(), "127.0.0.1:" + unreachable))) {
                child.await(Pattern.compile("threw \\d+"), 30_000);
                await().atMost(Duration.ofSeconds(10)).until(() -> !child.isAlive());
                output = child.output();
            }
            Set<Long> sent = sentIn(output);
            Matcher threw = Pattern.compile("threw (\\d+)").matcher(output);
            assertTrue(threw.find(), output);
            Set<Long> kept = new TreeSet<>();
            try (OutboxSpool spool = OutboxSpool.open(outbox, 1 << 20, false, "thrower@lan")) {
                for (OutboxSpool.Recovered r : spool.takeRecovered()) {
                    kept.add(ByteBuffer.wrap(r.message().data()).getLong());
                }
            }
            assertEquals(sent, kept, "the outbox keeps what send returned for, and not " + threw.group(1)
                    + ", whose send threw");
        }
    }

    /**
     * A send that fails later (NO_ROUTE for a name nobody registered) is told to its sender only once its record
     * is marked done on disk: the sender may send it again, and a crash the moment it is told must not send it on
     * the next start.
     */
    @Test
    void aSendThatFailedIsNotSentAfterACrashTheMomentItsSenderIsTold() throws Exception {
        try (Registry registry = Registry.builder().port(0)
                .defaultLease(Duration.ofSeconds(1)).build().start()) {
            Path outbox = tmp.resolve("failer");
            String output;
            try (ChildJvm child = ChildJvm.start(List.of("-Xmx128m"), OutboxFailMain.class.getName(),
                    List.of(registry.url(), outbox.toString(), "lan", "ghost-aaaaaa@lan"))) {
                child.await(Pattern.compile("failed 0 NO_ROUTE"), 30_000);
                await().atMost(Duration.ofSeconds(10)).until(() -> !child.isAlive());
                output = child.output();
            }
            assertTrue(output.contains("sent 0"), output);
            try (OutboxSpool spool = OutboxSpool.open(outbox, 1 << 20, false, "failer@lan")) {
                assertEquals(List.of(), spool.takeRecovered(), "the outbox keeps the message its sender was told"
                        + " had failed");
            }
        }
    }
}
