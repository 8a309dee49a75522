package io.gma.bench.crash;

import io.gma.bench.MetricsPage;
import io.gma.examples.cli.Gma;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kills PC servlets in the middle of a stream and counts what the consumer got: the registry, two PC servlets, a
 * consumer and a producer, each a JVM of its own started with the command line a user types ({@code gma
 * registry}, {@code gma pc}); the producer streams numbered messages across the two domains; meanwhile one PC
 * servlet after the other is killed with SIGKILL at a random moment and started again with the same command
 * line, in the same working directory (so on the same spool). At the end, every number acknowledged to the
 * producer must have reached the consumer once: lost and duplicated are counted, as are messages that came after
 * a higher number of the same sender.
 *
 * <pre>
 *   CROSS_DOMAIN:  source --uplink--> PC east ==POST==> PC west --uplink--> sink      (east and west killed)
 *   RELAYED:       source --uplink--> PC east (relay queue) <==poll== PC fw --uplink--> sink
 *                  fw is outbound-only, via east                                       (east and fw killed)
 * </pre>
 */
public final class CrashHarness {
    private static final Pattern PC_UP = Pattern.compile("GMA PC servlet of .*");
    private static final Pattern DONE = Pattern.compile("done sent=(\\d+) acked=(\\d+) failed=(\\d+)");
    private static final Pattern PROGRESS = Pattern.compile("progress distinct=(\\d+) duplicates=(\\d+)");
    private static final Pattern REPORT = Pattern.compile("report distinct=(\\d+) duplicates=(\\d+) late=(\\d+)"
            + " highest=(\\d+)");
    private static final long START_MILLIS = 60_000;

    /** Which way the stream goes. */
    public enum Topology {
        /** Producer in east, consumer in west, both with a URL: east posts to west. */
        CROSS_DOMAIN,
        /** Producer in east, consumer in fw, an outbound-only domain that polls east. */
        RELAYED
    }

    /**
     * One run's settings.
     *
     * @param kills how many kills in all, taking the two PC servlets in turn
     * @param rate messages per second the producer sends (0: flat out)
     * @param size bytes of each message's data (8 at least: its number)
     * @param upMillis a PC servlet runs this long at least, and twice as long at most, before it is killed
     * @param pcOptions added to each {@code gma pc} command line ({@code --fsync always}, {@code --memory}, ...)
     * @param dir where each process has its working directory (and so its spool) and its log
     */
    public record Settings(Topology topology, int kills, int rate, int size, long upMillis, List<String> pcOptions,
            long seed, Path dir) {
        public Settings {
            if (size < 8) {
                throw new IllegalArgumentException("size " + size + " is under 8 bytes, the message's number");
            }
            pcOptions = List.copyOf(pcOptions);
        }
    }

    /**
     * What one run counted.
     *
     * @param sent the messages the producer sent
     * @param acked those acknowledged to it; every other one failed, and its sender was told
     * @param received distinct numbers the consumer got
     * @param lost acknowledged numbers it never got
     * @param duplicated numbers it got more than once (each extra time counted)
     * @param late numbers that came after a higher one
     * @param lostSample a few of the lost numbers, for a look at the logs
     * @param spool what the last run of each PC servlet said of its spool in /metrics
     */
    public record Result(Topology topology, int kills, long sent, long acked, long failed, long received,
            long lost, long duplicated, long late, List<Long> lostSample, long millis, Map<String, String> spool) {
        /** One line: the counts. */
        public String line() {
            return topology + ": " + kills + " kills, " + sent + " sent, " + acked + " acknowledged, " + failed
                    + " failed, " + received + " received; lost " + lost + ", duplicated " + duplicated + ", late "
                    + late + " (" + millis / 1000 + " s)" + (lostSample.isEmpty() ? "" : "; lost e.g. " + lostSample);
        }
    }

    private CrashHarness() {
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Runs one stream with its kills; every process it started is gone when it returns. */
    public static Result run(Settings s, PrintStream progress) throws Exception {
        Random random = new Random(s.seed());
        long began = System.nanoTime();
        String producerDomain = "east";
        String consumerDomain = s.topology() == Topology.CROSS_DOMAIN ? "west" : "fw";
        int registryPort = freePort();
        String registry = "http://127.0.0.1:" + registryPort;
        List<String> jvm = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
        List<Proc> all = new ArrayList<>();
        AtomicLong distinct = new AtomicLong();
        Set<Long> failedNumbers = new HashSet<>();
        try {
            Proc reg = add(all, new Proc("registry", jvm, Gma.class.getName(), List.of("registry", "--port",
                    Integer.toString(registryPort)), s.dir().resolve("registry"), null));
            reg.start().await(Pattern.compile("GMA registry at .*"), START_MILLIS);
            Map<String, Integer> httpPorts = new LinkedHashMap<>();
            List<Proc> pcs = new ArrayList<>();
            Map<String, Integer> uplinks = new LinkedHashMap<>();
            for (String d : List.of(producerDomain, consumerDomain)) {
                int http = freePort();
                int uplink = freePort();
                httpPorts.put(d, http);
                uplinks.put(d, uplink);
                List<String> args = new ArrayList<>(List.of("pc", "--domain", d, "--registry", registry,
                        "--http-port", Integer.toString(http), "--uplink-port", Integer.toString(uplink)));
                if (d.equals("fw")) {
                    args.addAll(List.of("--via", producerDomain));
                }
                args.addAll(s.pcOptions());
                Proc pc = add(all, new Proc("pc-" + d, jvm, Gma.class.getName(), args, s.dir().resolve("pc-" + d),
                        null));
                pc.start().await(PC_UP, START_MILLIS);
                pcs.add(pc);
            }
            Proc sink = add(all, new Proc("sink", jvm, Sink.class.getName(), List.of(registry, consumerDomain,
                    "127.0.0.1:" + uplinks.get(consumerDomain), "sink"), s.dir().resolve("sink"), line -> {
                        Matcher m = PROGRESS.matcher(line);
                        if (m.matches()) {
                            distinct.set(Long.parseLong(m.group(1)));
                        }
                    }));
            String sinkName = sink.start().await(Pattern.compile("sink (.*)"), START_MILLIS).group(1);
            Proc source = add(all, new Proc("source", jvm, Source.class.getName(), List.of(registry, producerDomain,
                    "127.0.0.1:" + uplinks.get(producerDomain), sinkName, Integer.toString(s.size()),
                    Integer.toString(s.rate())), s.dir().resolve("source"), line -> {
                        if (line.startsWith("failed ")) {
                            synchronized (failedNumbers) {
                                failedNumbers.add(Long.parseLong(line.split(" ")[1]));
                            }
                        }
                    }));
            source.start().await(Pattern.compile("source .*"), START_MILLIS);

            for (int k = 0; k < s.kills(); k++) {
                Proc victim = pcs.get(k % pcs.size());
                // the stream flows before each kill: it hits a PC servlet in the middle of its work
                long before = distinct.get();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                Thread.sleep(s.upMillis() + (long) (random.nextDouble() * s.upMillis()));
                while (distinct.get() <= before) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IOException("the stream made no progress for 120 s before kill " + (k + 1)
                                + " (the sink has " + distinct.get() + "); see the logs in " + s.dir());
                    }
                    Thread.sleep(50);
                }
                victim.kill9();
                long down = random.nextInt(300);
                Thread.sleep(down);
                victim.start().await(PC_UP, START_MILLIS);
                if (progress != null) {
                    progress.println("  kill " + (k + 1) + "/" + s.kills() + ": " + victim.name() + " (sink had "
                            + distinct.get() + "), down " + down + " ms and a JVM's start");
                }
            }
            Thread.sleep(s.upMillis());
            source.tell("stop");
            Matcher done = source.await(DONE, TimeUnit.MINUTES.toMillis(6));
            long sent = Long.parseLong(done.group(1));
            long acked = Long.parseLong(done.group(2));
            long failed = Long.parseLong(done.group(3));
            // everything acknowledged arrives, or nothing more comes for 30 s
            long lastChange = System.nanoTime();
            long seen = -1;
            while (distinct.get() < acked && System.nanoTime() - lastChange < TimeUnit.SECONDS.toNanos(30)) {
                if (distinct.get() != seen) {
                    seen = distinct.get();
                    lastChange = System.nanoTime();
                }
                Thread.sleep(100);
            }
            Thread.sleep(1000); // a duplicate that trails the last message would come now
            sink.tell("report " + sent);
            Matcher report = sink.await(REPORT, 30_000);
            List<Long> lost = new ArrayList<>();
            Pattern missingOrEnd = Pattern.compile("(missing.*|end)");
            for (Matcher m; !(m = sink.await(missingOrEnd, 30_000)).group(1).equals("end");) {
                for (String n : m.group(1).substring("missing".length()).trim().split(" ")) {
                    if (!n.isEmpty() && !failedNumbers.contains(Long.parseLong(n))) {
                        lost.add(Long.parseLong(n));
                    }
                }
            }
            Map<String, String> spool = new LinkedHashMap<>();
            for (Map.Entry<String, Integer> e : httpPorts.entrySet()) {
                spool.put(e.getKey(), spoolMetrics(e.getValue()));
            }
            return new Result(s.topology(), s.kills(), sent, acked, failed, Long.parseLong(report.group(1)),
                    lost.size(), Long.parseLong(report.group(2)), Long.parseLong(report.group(3)),
                    lost.subList(0, Math.min(10, lost.size())), (System.nanoTime() - began) / 1_000_000, spool);
        } finally {
            for (int i = all.size() - 1; i >= 0; i--) {
                all.get(i).close();
            }
        }
    }

    private static Proc add(List<Proc> all, Proc p) {
        all.add(p);
        return p;
    }

    /** The spool's counters from a PC servlet's /metrics, in one line (or why not). */
    private static String spoolMetrics(int httpPort) {
        String page;
        try {
            page = MetricsPage.fetch("http://127.0.0.1:" + httpPort);
        } catch (IOException e) {
            return "/metrics unreachable: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        StringBuilder line = new StringBuilder();
        for (String l : page.split("\n")) {
            if (l.startsWith("gma_pc_spool_")) {
                line.append(line.length() == 0 ? "" : ", ").append(l.substring("gma_pc_spool_".length()));
            }
        }
        return line.length() == 0 ? "no spool" : line.toString();
    }
}
