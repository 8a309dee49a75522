package io.gma.client;

import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * A secured consumer in a JVM of its own, for {@link PreAuthFloodTest}: it records the numbers its messages
 * carry (a long each) and, for each line {@code count} on its input, prints what it has, its counters and its
 * heap; it closes at the end of its input.
 *
 * <pre>FloodTargetMain REGISTRY_URL KEYS_DIR IDENTITY RULES (lines separated by ';')</pre>
 *
 * <p>Output: {@code ready NAME}, then per {@code count}:
 * {@code count distinct=D duplicates=U heapUsed=BYTES heapMax=BYTES stats=EndpointStats[...]}.
 */
final class FloodTargetMain {
    private static final BitSet SEEN = new BitSet();
    private static long duplicates;

    private FloodTargetMain() {
    }

    public static void main(String[] args) throws Exception {
        Security security = Security.fromDirectory(Path.of(args[1]), args[2], Tls.ClientAuth.WANT)
                .rules(Rules.parse(args[3].replace(';', '\n'), "the test's rules")).build();
        try (Consumer c = Consumer.builder().registry(args[0]).domain("lan").label("flood-target").security(security)
                .onMessage(m -> record(ByteBuffer.wrap(m.data()).getLong())).build()) {
            System.out.println("ready " + c.name());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null;) {
                if (line.equals("count")) {
                    System.gc();
                    Runtime r = Runtime.getRuntime();
                    int distinct;
                    long twice;
                    synchronized (SEEN) {
                        distinct = SEEN.cardinality();
                        twice = duplicates;
                    }
                    System.out.println("count distinct=" + distinct + " duplicates=" + twice + " heapUsed="
                            + (r.totalMemory() - r.freeMemory()) + " heapMax=" + r.maxMemory() + " stats="
                            + c.stats());
                }
            }
        }
    }

    private static void record(long n) {
        synchronized (SEEN) {
            if (SEEN.get((int) n)) {
                duplicates++;
            }
            SEEN.set((int) n);
        }
    }
}
