package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.internal.link.WhenFull;
import io.gma.wire.ErrorCode;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A destination its PC servlet refused with QUEUE_FULL: sends to it fail or wait, as to a full queue. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FullDestinationsTest {
    private static final String WHY = "QUEUE_FULL slow-aaaaaa@west is full: ... (maxQueuedBytes 8388608)";

    @Test
    void aDestinationRefusedFailsAtOnceUnderFailNamingItAndTheLimit() throws Exception {
        FullDestinations full = new FullDestinations(new Counters());
        assertNull(full.admit("slow-aaaaaa@west", WhenFull.FAIL, 0), "not marked yet");
        full.refused("slow-aaaaaa@west", WHY);
        assertTrue(full.any());
        EndpointException e = assertThrows(EndpointException.class,
                () -> full.admit("slow-aaaaaa@west", WhenFull.FAIL, 0));
        assertEquals(ErrorCode.QUEUE_FULL, e.code());
        assertTrue(e.getMessage().startsWith("not sent to slow-aaaaaa@west: its PC servlet refused a message for it")
                && e.getMessage().endsWith(WHY), e.getMessage());
        assertNull(full.admit("fast-bbbbbb@west", WhenFull.FAIL, 0), "another destination is not held up");
        assertNull(full.admit("slow-aaaaaa@west", WhenFull.DROP_OLDEST, 0), "DROP_OLDEST has nothing to drop");
    }

    @Test
    void blockWaitsForThePauseThenOneSendProbesAndItsAckLiftsTheMark() throws Exception {
        FullDestinations full = new FullDestinations(new Counters());
        full.refused("slow-aaaaaa@west", WHY);
        long start = System.nanoTime();
        assertThrows(EndpointException.class, () -> full.admit("slow-aaaaaa@west", WhenFull.BLOCK,
                TimeUnit.MILLISECONDS.toNanos(200)));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waited >= 190, "BLOCK waited " + waited + " ms");
        Object probe = full.admit("slow-aaaaaa@west", WhenFull.BLOCK, FullDestinations.PAUSE_NANOS * 2);
        assertNotNull(probe, "after the pause, one send goes ahead");
        assertThrows(EndpointException.class, () -> full.admit("slow-aaaaaa@west", WhenFull.FAIL, 0),
                "only one probe at a time");
        full.probed("slow-aaaaaa@west", probe, true); // acknowledged, and no ERROR came first
        assertNull(full.admit("slow-aaaaaa@west", WhenFull.FAIL, 0));
        assertEquals(false, full.any());
    }

    @Test
    void aProbeRefusedMarksTheDestinationAgain() throws Exception {
        FullDestinations full = new FullDestinations(new Counters());
        full.refused("slow-aaaaaa@west", WHY);
        Object probe = full.admit("slow-aaaaaa@west", WhenFull.BLOCK, FullDestinations.PAUSE_NANOS * 2);
        full.refused("slow-aaaaaa@west", WHY); // its ERROR comes before its ACK
        full.probed("slow-aaaaaa@west", probe, true);
        assertThrows(EndpointException.class, () -> full.admit("slow-aaaaaa@west", WhenFull.FAIL, 0));
    }
}
