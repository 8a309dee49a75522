package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.internal.link.LinkWriter.Pace;
import org.junit.jupiter.api.Test;

/** Who writes a send: the sender after a pause or an answer, the event loop in a stream or one-way traffic. */
class LinkWriterPaceTest {
    private static final long US = 1_000;

    @Test
    void sendsCloseTogetherAreAStreamAnsweredOrNot() {
        assertEquals(Pace.STREAM, LinkWriter.pace(19 * US, 1, false));
        assertEquals(Pace.STREAM, LinkWriter.pace(19 * US, 1, true));
        assertEquals(Pace.STREAM, LinkWriter.pace(300 * US, 16, true), "16 sends in 300 us: 19 us apart");
    }

    @Test
    void oneWaySendsUpTo100MicrosecondsApartGoToTheLoopAtOnce() {
        // a producer's batches of rows, 20 to 100 us apart, with nothing coming back but ACKs
        assertEquals(Pace.ONE_WAY, LinkWriter.pace(20 * US, 1, false));
        assertEquals(Pace.ONE_WAY, LinkWriter.pace(99 * US, 1, false));
        assertEquals(Pace.ONE_WAY, LinkWriter.pace(1_500 * US, 16, false), "16 sends in 1.5 ms: 94 us apart");
        assertEquals(Pace.PAUSE, LinkWriter.pace(100 * US, 1, false));
        assertEquals(Pace.PAUSE, LinkWriter.pace(5_000 * US, 1, false));
    }

    @Test
    void aSendAfterAnAnswerIsWrittenByTheSender() {
        // a ping-pong or a request and its reply: a round trip's latency must not wait for the loop
        assertEquals(Pace.PAUSE, LinkWriter.pace(21 * US, 1, true));
        assertEquals(Pace.PAUSE, LinkWriter.pace(60 * US, 1, true));
    }
}
