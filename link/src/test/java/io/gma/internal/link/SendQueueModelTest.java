package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The send queue against a model of it (three lists of messages and a count of those taken), through random
 * runs of small and large offers, a gateway's packed messages, control messages, takes, ACKs (inside a run,
 * whole runs, more than was taken), lost links and futures, ending acknowledged or closed: after every step
 * the order written, the counts, the bytes unsent and every future asked for must agree with the model. Each
 * seed is a run that can be replayed.
 */
class SendQueueModelTest {
    private static final Envelope E = Envelope.of("a@x", "b@x");
    private static final int RUNS = 300;

    /** A message as the model sees it; p is null for control and a gateway's messages. */
    private record M(long seq, int size, boolean control, QueuedMessage p) {
    }

    @Test
    void theQueueAgreesWithItsModelThroughRandomRuns() throws Exception {
        for (long seed = 0; seed < RUNS; seed++) {
            try {
                run(seed);
            } catch (Throwable t) {
                throw new AssertionError("seed " + seed + ": " + t, t);
            }
        }
    }

    private static void run(long seed) throws Exception {
        Random r = new Random(seed);
        int steps = 50 + r.nextInt(1500);
        boolean closeAtEnd = r.nextBoolean();
        SendQueue q = new SendQueue(1 << 30, 1_000_000, new LinkCounters());
        ArrayDeque<M> control = new ArrayDeque<>();
        ArrayDeque<M> data = new ArrayDeque<>();
        List<M> flight = new ArrayList<>();
        int taken = 0; // messages of flight taken by the current link
        Map<QueuedMessage, CompletableFuture<Void>> asked = new HashMap<>();
        List<M> acked = new ArrayList<>();
        List<M> allData = new ArrayList<>();
        long seq = 0;
        SendQueue.Run run = new SendQueue.Run();
        StreamDecoder dec = WireCodec.standard().newStreamDecoder();
        for (int step = 0; step < steps; step++) {
            int op = r.nextInt(100);
            if (op < 35) {
                int len = r.nextInt(10) == 0 ? 4096 + r.nextInt(100) : r.nextInt(300);
                QueuedMessage p = new QueuedMessage(q, ++seq);
                long unsent = q.offerData(p, E, Command.DATA, new byte[len], WhenFull.FAIL, 0, "x");
                M m = new M(seq, E.packedLength(Command.DATA, new byte[len]), false, p);
                data.add(m);
                allData.add(m);
                assertEquals(unsentModel(control, data, flight, taken), unsent, "unsent after offer");
            } else if (op < 40) {
                byte[] b = E.pack(++seq, Command.DATA, new byte[r.nextInt(300)]);
                q.addData(b);
                M m = new M(seq, b.length, false, null);
                data.add(m);
                allData.add(m);
            } else if (op < 47) {
                byte[] b = E.pack(++seq, Command.REPLY, new byte[r.nextInt(50)]);
                long unsent = q.offerControl(b);
                control.add(new M(seq, b.length, true, null));
                assertEquals(unsentModel(control, data, flight, taken), unsent, "unsent after control");
            } else if (op < 70) {
                int got = q.next(null, run);
                List<Long> seqs = new ArrayList<>();
                if (got > 0) {
                    dec.feed(run.bytes, run.offset, run.length, msg -> seqs.add(msg.sequence()));
                }
                assertEquals(got, seqs.size());
                for (long s : seqs) {
                    M expect;
                    if (taken < flight.size()) {
                        expect = flight.get(taken);
                    } else if (!control.isEmpty()) {
                        expect = control.poll();
                        flight.add(expect);
                    } else if (!data.isEmpty()) {
                        expect = data.poll();
                        flight.add(expect);
                    } else {
                        fail("took more than there is");
                        return;
                    }
                    taken++;
                    assertEquals(expect.seq, s, "order");
                }
                if (got == 0) {
                    assertTrue(taken == flight.size() && control.isEmpty() && data.isEmpty(), "next gave none");
                }
            } else if (op < 88) {
                int c = r.nextInt(taken + 3);
                q.acknowledge(null, c);
                int rel = Math.min(c, taken);
                for (int i = 0; i < rel; i++) {
                    M m = flight.remove(0);
                    if (!m.control) {
                        acked.add(m);
                    }
                }
                taken -= rel;
            } else if (op < 93) {
                q.linkLost(null, null);
                taken = 0;
            } else {
                if (!allData.isEmpty()) {
                    M m = allData.get(r.nextInt(allData.size()));
                    if (m.p != null) {
                        asked.put(m.p, m.p.acknowledged());
                    }
                }
            }
            // check counts
            int msgs = control.size() + data.size() + flight.size();
            long bytes = 0;
            for (M m : control) {
                bytes += m.size;
            }
            for (M m : data) {
                bytes += m.size;
            }
            for (M m : flight) {
                bytes += m.size;
            }
            assertEquals(msgs, q.messages(), "messages at step " + step);
            assertEquals(bytes, q.bytes(), "bytes at step " + step);
            for (M m : allData) {
                CompletableFuture<Void> f = m.p == null ? null : asked.get(m.p);
                if (f != null) {
                    assertEquals(acked.contains(m), f.isDone(), "future of " + m.seq + " at step " + step);
                }
            }
        }
        if (closeAtEnd) {
            List<Long> expect = new ArrayList<>();
            for (M m : flight) {
                expect.add(m.seq);
            }
            for (M m : control) {
                expect.add(m.seq);
            }
            for (M m : data) {
                expect.add(m.seq);
            }
            List<Long> kept = new ArrayList<>();
            LinkException why = new LinkException(ErrorCode.SHUTTING_DOWN, "x");
            for (byte[] b : q.closeKeeping(why)) {
                kept.add(WireCodec.standard().decode(b).sequence());
            }
            assertEquals(expect, kept, "closeKeeping");
            for (M m : allData) {
                if (m.p != null) {
                    CompletableFuture<Void> f = m.p.acknowledged();
                    assertEquals(!acked.contains(m), f.isCompletedExceptionally(), "after close " + m.seq);
                    assertTrue(f.isDone());
                }
            }
            assertEquals(0, q.messages());
            return;
        }
        // everything acked by the end
        q.linkLost(null, null);
        taken = 0;
        while (q.next(null, run) > 0) {
            // all of it taken again
        }
        q.acknowledge(null, Long.MAX_VALUE / 2);
        assertEquals(0, q.messages());
        assertEquals(0, q.bytes());
        for (M m : allData) {
            if (m.p != null) {
                CompletableFuture<Void> f = m.p.acknowledged();
                assertTrue(f.isDone() && !f.isCompletedExceptionally(), "acked at the end " + m.seq);
            }
        }
        assertTrue(q.hasRoom(1 << 30, 1_000_000), "data counts back to zero");
        // after close
        q.close(new LinkException(ErrorCode.SHUTTING_DOWN, "x"));
    }

    private static long unsentModel(ArrayDeque<M> control, ArrayDeque<M> data, List<M> flight, int taken) {
        long b = 0;
        for (M m : control) {
            b += m.size;
        }
        for (M m : data) {
            b += m.size;
        }
        for (int i = taken; i < flight.size(); i++) {
            b += flight.get(i).size;
        }
        return b;
    }
}
