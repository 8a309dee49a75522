package io.gma.bench.crash;

import io.gma.client.Consumer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The consumer of a crash run, a process of its own, under an exact name ({@code LABEL@DOMAIN}) that the source
 * sends to: counts each number it is handed (the first 8 bytes of a message), the duplicates, and those that
 * came after a higher one. What it prints:
 *
 * <pre>
 *   sink NAME                                          registered
 *   progress distinct=D duplicates=X                   every half second
 *   report distinct=D duplicates=X late=L highest=H    after "report N" on its standard input, then
 *   missing A B C ...                                  the numbers up to N it never got, 1,000 a line, then
 *   end
 * </pre>
 *
 * {@code java ... Sink REGISTRY DOMAIN PC_UPLINK LABEL}.
 */
public final class Sink {
    private static final int PER_LINE = 1000;
    /** How many times each number came, by number (index 0 unused); grown as needed. */
    private static byte[] seen = new byte[1 << 16];
    private static long distinct;
    private static long duplicates;
    private static long late;
    private static long highest;

    private Sink() {
    }

    private static synchronized void got(long n) {
        if (n <= 0 || n > Integer.MAX_VALUE - 8) {
            duplicates++; // not a number the source sends: counted as damage, never as delivered
            return;
        }
        if (n >= seen.length) {
            seen = Arrays.copyOf(seen, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(n + 1, 2L * seen.length)));
        }
        if (seen[(int) n] != 0) {
            duplicates++;
        } else {
            distinct++;
            if (n < highest) {
                late++;
            }
        }
        if (seen[(int) n] < Byte.MAX_VALUE) {
            seen[(int) n]++;
        }
        highest = Math.max(highest, n);
    }

    private static synchronized String progress() {
        return "progress distinct=" + distinct + " duplicates=" + duplicates;
    }

    private static synchronized void report(long upTo) {
        System.out.println("report distinct=" + distinct + " duplicates=" + duplicates + " late=" + late
                + " highest=" + highest);
        StringBuilder missing = new StringBuilder("missing");
        int onLine = 0;
        for (long n = 1; n <= upTo; n++) {
            if (n >= seen.length || seen[(int) n] == 0) {
                missing.append(' ').append(n);
                if (++onLine == PER_LINE) {
                    System.out.println(missing);
                    missing.setLength("missing".length());
                    onLine = 0;
                }
            }
        }
        if (onLine > 0) {
            System.out.println(missing);
        }
        System.out.println("end");
    }

    public static void main(String[] args) throws Exception {
        try (Consumer c = Consumer.builder().registry(args[0]).domain(args[1]).pcServlet(args[2]).label(args[3])
                .exactLabel(true).onMessage(m -> got(ByteBuffer.wrap(m.data()).getLong())).build()) {
            System.out.println("sink " + c.name());
            Thread progress = new Thread(() -> {
                while (true) {
                    System.out.println(progress());
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "sink-progress");
            progress.setDaemon(true);
            progress.start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    if (line.startsWith("report ")) {
                        report(Long.parseLong(line.substring(7).trim()));
                    }
                }
            }
        }
    }
}
