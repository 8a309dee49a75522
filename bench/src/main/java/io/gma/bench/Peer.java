package io.gma.bench;

/**
 * A transport measured beside GMA, as the suite drives it: a name for the legend, how it does round trips and how
 * it streams. Either may be null where the transport is measured only one way.
 */
record Peer(String name, RoundTrips roundTrips, Stream stream) {

    /** Round-trip times of n messages of size bytes, nanoseconds, in the order measured. */
    @FunctionalInterface
    interface RoundTrips {
        long[] run(int size, int n) throws Exception;
    }

    /** Seconds from the first send of n messages of size bytes to the last one's arrival. */
    @FunctionalInterface
    interface Stream {
        double seconds(int size, int n) throws Exception;
    }
}
