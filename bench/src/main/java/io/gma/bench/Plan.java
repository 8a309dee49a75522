package io.gma.bench;

/**
 * How much the suite measures: the sizes, rounds and durations of each stage. {@link #FULL} is {@code gma bench},
 * {@link #QUICK} is {@code gma bench --quick} (under 3 minutes on 2 cores); {@link #SMOKE} is for the suite's own
 * test, a few rounds of everything, meaningless as a measurement.
 *
 * @param latencySizes ping-pong message sizes, bytes (figures 4 and 5)
 * @param rounds measured round trips per size up to 64 KiB; as many again run first as warm-up
 * @param largeRounds measured round trips per size above 64 KiB
 * @param streamSizes streaming message sizes, bytes
 * @param streamBytes bytes a streaming pass aims to move; the message count is this over the size, clamped
 * @param streamMinMessages the fewest messages in a streaming pass
 * @param streamMaxMessages the most messages in a streaming pass
 * @param producers fan-in producer counts (figure 6)
 * @param faninKb fan-in message sizes, KiB
 * @param faninSeconds fan-in measured interval per point, seconds, after a quarter of it as warm-up
 * @param tunnelSizes cross-domain round-trip sizes, bytes (figure 7)
 * @param tunnelRounds measured cross-domain round trips per size
 * @param tunnelStreamSizes cross-domain streaming sizes, bytes
 * @param tunnelStreamBytes bytes a cross-domain streaming pass aims to move (same clamps as streaming)
 * @param tokenSizes secure cross-domain round-trip sizes, bytes (tokens: Ed25519 against HMAC)
 * @param tokenRounds measured secure round trips per series and size, in five passes taking turns
 * @param tokenStreamMessages 1 KiB messages a secure stream (east to west) carries, for the messages a POST holds
 * @param verifyPassMillis one measured pass of a token check, milliseconds; five of each, after five as warm-up
 * @param registryEndpoints endpoints registered in PostgreSQL for the registry's look-ups
 * @param registryCalls measured look-ups per series (as many again as warm-up)
 * @param scaleAgents idle uplinks to one PC servlet, one step each (issue 22: many thin links)
 * @param scaleSeconds how long each step's agents publish, 1 message a second each
 * @param scaleIdleSeconds how long each step's idle uplinks are watched for CPU (a ping round is 15 s)
 * @param scaleMemory whether the scale stage's PC servlets run without a spool ({@code --memory})
 * @param tablesRows rows a pass of the tables stage's continuous rounds sends or inserts
 * @param tablesRounds the tables stage's alternated rounds: plain, match-all and 1-in-10 passes in each
 * @param tablesWarmUpMillis how long each kind of the tables stage's passes warms up at least (one pass at least)
 * @param tablesProducers the tables stage's steps: producers of one table, each step's latest queries after
 * @param tablesQueries latest queries measured at each step, after the first
 */
record Plan(String name, int[] latencySizes, int rounds, int largeRounds, int[] streamSizes, long streamBytes,
        int streamMinMessages, int streamMaxMessages, int[] producers, int[] faninKb, double faninSeconds,
        int[] tunnelSizes, int tunnelRounds, int[] tunnelStreamSizes, long tunnelStreamBytes,
        int[] tokenSizes, int tokenRounds, int tokenStreamMessages, int verifyPassMillis, int registryEndpoints,
        int registryCalls, int[] scaleAgents, int scaleSeconds, int scaleIdleSeconds, boolean scaleMemory,
        int tablesRows, int tablesRounds, int tablesWarmUpMillis, int[] tablesProducers, int tablesQueries) {

    static final Plan FULL = new Plan("full", powersOf4(1, 1 << 20), 10_000, 1_000,
            new int[] {64, 256, 1024, 4096, 32768}, 1L << 30, 20_000, 2_000_000,
            new int[] {1, 2, 4, 8, 16}, new int[] {8, 16, 32}, 2,
            powersOf4(64, 65536), 2_000, new int[] {64, 1024, 32768}, 256L << 20,
            new int[] {64, 1024, 16384}, 2_000, 200_000, 200, 100_000, 20_000,
            new int[] {1_000, 5_000, 10_000}, 30, 20, false,
            2_000_000, 5, 2_000, new int[] {100, 1_000}, 200);

    static final Plan QUICK = new Plan("quick", new int[] {64, 1024, 16384, 65536}, 2_000, 200,
            new int[] {64, 1024, 32768}, 128L << 20, 4_000, 500_000,
            new int[] {1, 4, 16}, new int[] {8, 16, 32}, 0.5,
            new int[] {64, 1024, 16384}, 300, new int[] {1024, 32768}, 32L << 20,
            new int[] {64, 1024}, 500, 20_000, 50, 100_000, 5_000,
            new int[] {1_000}, 10, 5, false,
            300_000, 3, 1_000, new int[] {1_000}, 50);

    static final Plan SMOKE = new Plan("smoke", new int[] {64, 1024}, 20, 5,
            new int[] {1024}, 1L << 20, 50, 200,
            new int[] {1, 2}, new int[] {8}, 0.1,
            new int[] {64}, 10, new int[] {1024}, 256L << 10,
            new int[] {64}, 10, 200, 2, 1_000, 200,
            new int[] {20}, 2, 1, false,
            2_000, 1, 0, new int[] {3, 6}, 3);

    /**
     * This plan with the scale stage's steps and publishing time replaced, where given (null: kept), its PC servlets
     * in memory or not.
     */
    Plan withScale(int[] agents, Integer seconds, boolean memory) {
        return new Plan(name, latencySizes, rounds, largeRounds, streamSizes, streamBytes, streamMinMessages,
                streamMaxMessages, producers, faninKb, faninSeconds, tunnelSizes, tunnelRounds, tunnelStreamSizes,
                tunnelStreamBytes, tokenSizes, tokenRounds, tokenStreamMessages, verifyPassMillis, registryEndpoints,
                registryCalls, agents != null ? agents : scaleAgents, seconds != null ? seconds : scaleSeconds,
                scaleIdleSeconds, memory, tablesRows, tablesRounds, tablesWarmUpMillis, tablesProducers, tablesQueries);
    }

    /**
     * Whether this is {@code other}, or made from it by {@link #withScale}: compare plans with this, not with
     * {@code ==}.
     */
    boolean is(Plan other) {
        return name.equals(other.name);
    }

    /** Measured round trips for a size: fewer above 64 KiB, where one takes a millisecond or more. */
    int rounds(int size) {
        return size > 65536 ? largeRounds : rounds;
    }

    /** Messages in a streaming pass of this size. */
    int streamMessages(int size) {
        return clamp(streamBytes / size);
    }

    /** Messages in a cross-domain streaming pass of this size. */
    int tunnelStreamMessages(int size) {
        return clamp(tunnelStreamBytes / size);
    }

    private int clamp(long messages) {
        return (int) Math.max(streamMinMessages, Math.min(streamMaxMessages, messages));
    }

    private static int[] powersOf4(int from, int to) {
        int n = 0;
        for (long s = from; s <= to; s *= 4) {
            n++;
        }
        int[] sizes = new int[n];
        for (int i = 0, s = from; i < n; i++, s *= 4) {
            sizes[i] = s;
        }
        return sizes;
    }
}
