package io.gma.pcservlet;

import static io.gma.pcservlet.DomainQueue.Offer.TAKEN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.Message;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** DomainQueue.holdBack and the held endpoints' cap, with the cases a review found failing. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HoldBackTest {
    private static final long MAX_BYTES = 8L << 20;
    private static final int MAX_MESSAGES = 65_536;

    /** A message not spooled, as a queue holds it. */
    private static Queued msg(Command c, String from, String to, long seq, byte[] data) {
        return Queued.inMemory(Message.of(c, from, to, seq, data));
    }

    private static DomainQueue queue() {
        return new DomainQueue("west", MAX_BYTES, MAX_MESSAGES, new AtomicLong(), 64L << 20);
    }

    /** Holds X: X's message goes out in a batch that is answered 429 naming X. */
    private static void holdX(DomainQueue q) throws InterruptedException {
        assertEquals(TAKEN, q.offer(msg(Command.DATA, "p@east", "x@west", 1, new byte[10]), false));
        assertEquals(1, q.nextBatch(1 << 20, 0, 0, () -> false).size());
        q.holdBack(List.of("x@west"), TimeUnit.SECONDS.toNanos(60));
    }

    @Test
    void aReplyToAHeldEndpointIsNotHeldBehindItsData() throws Exception {
        DomainQueue q = queue();
        holdX(q);
        // x's data queue at west is full, but a REPLY goes in its control lane there, never refused
        Message reply = Message.of(Command.REPLY, "s@east", "x@west", 7, new byte[10]);
        assertEquals(TAKEN, q.offer(Queued.inMemory(reply), false), "a REPLY from an uplink is refused (its uplink"
                + " parks)");
        List<Queued> batch = q.nextBatch(1 << 20, 0, TimeUnit.MILLISECONDS.toNanos(200), () -> false);
        assertTrue(batch.contains(Queued.inMemory(reply)), "the REPLY waits for x's hold (Retry-After, up to 60 s): "
                + batch);
    }

    @Test
    void aReplyToAHeldEndpointAtItsCapIsTakenFromTheUplink() throws Exception {
        DomainQueue q = queue();
        holdX(q);
        for (int i = 0; q.offer(msg(Command.DATA, "p@east", "x@west", i + 2, new byte[4096]), false) == TAKEN;
                i++) {
            // a producer's stream to x fills x's quarter
        }
        for (int i = 0; q.offer(msg(Command.DATA, "p@east", "x@west", i + 1000, new byte[10]), false) == TAKEN;
                i++) {
            // to the byte
        }
        // a server in east answers a request of x's: refused, so the server's whole uplink parks until x's hold
        // ends, and again at every 429 while x is stuck
        Message reply = Message.of(Command.REPLY, "s@east", "x@west", 7, new byte[10]);
        assertEquals(TAKEN, q.offer(Queued.inMemory(reply), false), "a REPLY to a held endpoint is refused: its"
                + " sender's"
                + " uplink parks behind x's data");
    }

    @Test
    void aHeldEndpointOfSmallMessagesDoesNotTakeTheWholeQueue() throws Exception {
        DomainQueue q = queue();
        holdX(q);
        int held = 0;
        while (q.offer(msg(Command.DATA, "p@east", "x@west", held + 2, new byte[0]), false) == TAKEN) {
            held++;
        }
        // the cap is a quarter of the bytes, but nothing of the messages: 2 MiB of 32-byte messages is 65,536
        int neighbour = 0;
        while (neighbour < 1000 && q.offer(msg(Command.DATA, "p@east", "y@west", neighbour + 1,
                new byte[0]), false) == TAKEN) {
            neighbour++;
        }
        assertEquals(1000, neighbour, "x holds " + held + " messages of " + MAX_MESSAGES + "; y gets room for "
                + neighbour + " only");
    }

    @Test
    void offersToAHeldEndpointDoNotMakeTheForwarderScanTheQueueEachTime() throws Exception {
        DomainQueue q = queue();
        holdX(q);
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long[] cpu = new long[1];
        Thread forwarder = new Thread(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    q.nextBatch(1 << 20, 0, TimeUnit.SECONDS.toNanos(1), () -> false);
                }
            } catch (InterruptedException stop) {
                // done
            }
            cpu[0] = mx.getCurrentThreadCpuTime();
        });
        forwarder.start();
        int n = 52_000;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) { // messages come one by one off uplinks, a few microseconds apart
            q.offer(msg(Command.DATA, "p@east", "x@west", i + 2, new byte[8]), false);
            long until = System.nanoTime() + 5_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        forwarder.interrupt();
        forwarder.join();
        long cpuMs = TimeUnit.NANOSECONDS.toMillis(cpu[0]);
        System.out.println("REVIEW offers took " + ms + " ms; the forwarder used " + cpuMs + " ms of CPU");
        assertTrue(cpuMs < 1_000, "the forwarder used " + cpuMs + " ms of CPU while " + n + " messages for a held"
                + " endpoint came: each offer wakes it, and it scans every held message under the queue's lock");
    }

    @Test
    void anEndpointPastItsShareIsRefusedAloneUntilItsMessagesAreTaken() throws Exception {
        DomainQueue q = queue();
        assertEquals(TAKEN, q.offer(msg(Command.DATA, "p@east", "x@west", 1, new byte[10]), false));
        assertEquals(1, q.nextBatch(1 << 20, 0, 0, () -> false).size());
        q.holdBack(List.of("x@west"), TimeUnit.MILLISECONDS.toNanos(100)); // a 429 naming x
        int taken = 0;
        while (q.offer(msg(Command.DATA, "p@east", "x@west", taken + 2, new byte[4096]), false) == TAKEN) {
            taken++;
        }
        Message next = Message.of(Command.DATA, "p@east", "x@west", 99_999, new byte[4096]);
        assertEquals(DomainQueue.Offer.ENDPOINT_FULL, q.wouldTake(next), "x's share: " + taken + " messages");
        assertEquals(TAKEN, q.offer(msg(Command.DATA, "p@east", "y@west", 1, new byte[4096]), false),
                "y is refused with x");
        assertTrue(q.describeShare("x@west").contains("maxQueuedBytes " + MAX_BYTES), q.describeShare("x@west"));
        Thread.sleep(150); // a deliberate pause, not a wait: x's hold ends (Retry-After), west took nothing yet
        assertEquals(DomainQueue.Offer.ENDPOINT_FULL, q.wouldTake(next), "x's cap went with its hold");
        while (!q.isEmpty()) { // west takes everything, x's too
            q.nextBatch(1 << 30, 0, 0, () -> false);
            q.done();
        }
        assertEquals(TAKEN, q.wouldTake(next), "x stays capped after west took its messages");
    }
}
