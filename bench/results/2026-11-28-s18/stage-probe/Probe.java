package io.gma.wire;

/** TEMPORARY latency probe (not to be committed). */
public final class Probe {
    public static final boolean ON = Boolean.getBoolean("gma.probe");
    private static long last;
    private static int lastStage = -1;
    private static final long[][] sum = new long[16][16];
    private static final long[][] count = new long[16][16];
    public static final String[] NAMES = {"req", "router", "fwdBatch", "postStart", "servlet", "placed", "take",
        "writerWrite", "readerRead", "postDone", "", "", "", "", "", ""};

    private Probe() {
    }

    public static synchronized void at(int stage) {
        if (!ON) {
            return;
        }
        long now = System.nanoTime();
        if (lastStage >= 0) {
            sum[lastStage][stage] += now - last;
            count[lastStage][stage]++;
        }
        last = now;
        lastStage = stage;
    }

    public static synchronized void reset() {
        for (int i = 0; i < 16; i++) {
            java.util.Arrays.fill(sum[i], 0);
            java.util.Arrays.fill(count[i], 0);
        }
        lastStage = -1;
    }

    public static synchronized String report() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 16; j++) {
                if (count[i][j] > 100) {
                    b.append(String.format("%12s -> %-12s n=%7d mean %8.1f us%n", NAMES[i], NAMES[j], count[i][j],
                            sum[i][j] / 1000.0 / count[i][j]));
                }
            }
        }
        return b.toString();
    }
}
