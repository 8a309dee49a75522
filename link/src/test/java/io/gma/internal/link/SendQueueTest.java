package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The send queue's futures, made only when asked for: asked before or after the ACK, across a lost link, on
 * close and on DROP_OLDEST. The queue compares links by identity only, so a null link stands for one here.
 */
class SendQueueTest {
    private final SendQueue queue = new SendQueue(1 << 30, 100_000, new LinkCounters());

    private static final Envelope ENVELOPE = Envelope.of("a@x", "b@x");

    private QueuedMessage offer(int seq) throws LinkException {
        return offer(queue, seq, WhenFull.FAIL);
    }

    private static QueuedMessage offer(SendQueue q, int seq, WhenFull policy) throws LinkException {
        QueuedMessage p = new QueuedMessage(q, seq);
        q.offerData(p, ENVELOPE, Command.DATA, new byte[seq % 100], policy, 0, "peer");
        return p;
    }

    /** Why {@code f} failed; a test that would wait forever for it fails instead. */
    private static Throwable failureOf(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS)).getCause();
    }

    /** Writes up to {@code n} messages on the (null) link, run by run. */
    private int write(int n) {
        return write(queue, n, new ArrayList<>());
    }

    /** As {@link #write(int)}, adding each message's sequence, as written, to {@code sequences}. */
    private static int write(SendQueue q, int n, List<Long> sequences) {
        int written = 0;
        SendQueue.Run run = new SendQueue.Run();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        while (written < n) {
            int got = q.next(null, run);
            if (got == 0) {
                break;
            }
            int before = sequences.size();
            try {
                decoder.feed(run.bytes, run.offset, run.length, m -> sequences.add(m.sequence()));
            } catch (ProtocolException e) {
                throw new AssertionError(e);
            }
            assertEquals(got, sequences.size() - before, "the run holds as many messages as next said");
            assertTrue(decoder.isIdle(), "a run holds whole messages");
            written += got;
        }
        return written;
    }

    @Test
    void aFutureAskedBeforeTheAckCompletesWithIt() throws Exception {
        QueuedMessage a = offer(1);
        QueuedMessage b = offer(2);
        CompletableFuture<Void> fb = b.acknowledged();
        assertSame(fb, b.acknowledged(), "one future per message");
        assertEquals(2, write(10));
        queue.acknowledge(null, 1);
        assertFalse(fb.isDone(), "the ACK covered only the first message");
        queue.acknowledge(null, 1);
        assertTrue(fb.isDone() && !fb.isCompletedExceptionally());
        assertTrue(a.acknowledged().isDone(), "asked after its ACK: complete at once");
        assertEquals(0, queue.messages());
        assertEquals(0, queue.bytes());
    }

    /**
     * A message the peer refused (its ERROR read before the ACK that passes it, as a PC servlet's uplink writes
     * them for a full destination) fails with that ERROR's code when the ACK comes, whether its future was asked
     * before or after; the messages around it complete. A lost link forgets refusals: what it had in flight goes
     * again, and the next link answers afresh.
     */
    @Test
    void aMessageRefusedBeforeItsAckFailsWithTheRefusalAndTheOthersComplete() throws Exception {
        QueuedMessage a = offer(1);
        QueuedMessage b = offer(2);
        QueuedMessage c = offer(3);
        QueuedMessage d = offer(4);
        CompletableFuture<Void> fa = a.acknowledged();
        CompletableFuture<Void> fb = b.acknowledged();
        assertEquals(4, write(10));
        queue.refused(2, new LinkException(ErrorCode.QUEUE_FULL, "b@x is full"));
        queue.refused(3, new LinkException(ErrorCode.QUEUE_FULL, "b@x is full"));
        assertFalse(fb.isDone(), "refused, but its ACK has not come: nothing is settled yet");
        queue.acknowledge(null, 4);
        assertTrue(fa.isDone() && !fa.isCompletedExceptionally(), "the message before it completes");
        assertEquals(ErrorCode.QUEUE_FULL, ((LinkException) failureOf(fb)).code());
        assertEquals(ErrorCode.QUEUE_FULL, ((LinkException) failureOf(c.acknowledged())).code(),
                "asked after the ACK: the refusal still counts");
        assertTrue(d.acknowledged().isDone() && !d.acknowledged().isCompletedExceptionally(), "the one after it");

        QueuedMessage e = offer(5);
        CompletableFuture<Void> fe = e.acknowledged();
        assertEquals(1, write(10));
        queue.refused(5, new LinkException(ErrorCode.QUEUE_FULL, "b@x is full"));
        queue.linkLost(null, null);
        assertEquals(1, write(10), "written again on the next link");
        queue.acknowledge(null, 1);
        assertTrue(fe.isDone() && !fe.isCompletedExceptionally(), "the next link took it: the old refusal is gone");
    }

    /**
     * A PC servlet's queue numbers what it adds, data and control apart, and learns from the two counts which of
     * them the peer has: control is written first, so an ACK may cover control added after data not yet
     * acknowledged.
     */
    @Test
    void dataAndControlAreNumberedAndAcknowledgedEachInTheOrderQueued() throws Exception {
        assertEquals(1, queue.addData(Packed.make(1, Command.DATA, "a@x", "b@x", new byte[10])));
        assertEquals(2, queue.addData(Packed.make(2, Command.DATA, "a@x", "b@x", new byte[10])));
        assertEquals(1, queue.addControl(Packed.make(3, Command.REPLY, "a@x", "b@x", new byte[10])));
        assertEquals(0, queue.dataAcknowledged());
        assertEquals(0, queue.controlAcknowledged());
        assertEquals(3, write(10));
        queue.acknowledge(null, 1); // the REPLY went first
        assertEquals(0, queue.dataAcknowledged());
        assertEquals(1, queue.controlAcknowledged());
        queue.acknowledge(null, 1);
        assertEquals(1, queue.dataAcknowledged());
        assertEquals(2, queue.addControl(Packed.make(4, Command.ERROR, "a@x", "b@x", new byte[10])));
        assertEquals(1, write(10));
        queue.acknowledge(null, 2);
        assertEquals(2, queue.dataAcknowledged());
        assertEquals(2, queue.controlAcknowledged());
    }

    @Test
    void anUnwrittenMessageIsNotAcknowledgedByAnAckForOthers() throws Exception {
        offer(1);
        assertEquals(1, write(10));
        QueuedMessage late = offer(2);
        queue.acknowledge(null, 5); // more than is in flight: only what is in flight counts
        assertFalse(late.acknowledged().isDone());
        assertEquals(1, queue.messages());
        assertEquals(1, write(10));
        queue.acknowledge(null, 1);
        assertTrue(late.acknowledged().isDone());
    }

    @Test
    void messagesInFlightOnALostLinkCompleteWhenTheNextLinkAcknowledgesThem() throws Exception {
        QueuedMessage a = offer(1);
        QueuedMessage b = offer(2);
        QueuedMessage c = offer(3);
        assertEquals(3, write(10));
        queue.acknowledge(null, 1); // a
        queue.linkLost(null, null); // b and c go back in front
        CompletableFuture<Void> fc = c.acknowledged();
        assertFalse(b.acknowledged().isDone());
        assertFalse(fc.isDone());
        QueuedMessage d = offer(4);
        assertEquals(3, write(10)); // b, c resent first, then d
        queue.acknowledge(null, 1);
        assertTrue(b.acknowledged().isDone());
        assertFalse(fc.isDone(), "c was resent after b: one ACK does not cover it");
        queue.acknowledge(null, 2);
        assertTrue(fc.isDone() && d.acknowledged().isDone() && a.acknowledged().isDone());
        assertEquals(0, queue.messages());
    }

    @Test
    void closeFailsWhatIsQueuedAndInFlightAskedBeforeOrAfter() throws Exception {
        QueuedMessage acked = offer(1);
        QueuedMessage inFlight = offer(2);
        assertEquals(2, write(10));
        queue.acknowledge(null, 1);
        QueuedMessage queued = offer(3);
        CompletableFuture<Void> asked = queued.acknowledged();
        LinkException why = new LinkException(ErrorCode.SHUTTING_DOWN, "closing");
        assertEquals(2, queue.closeKeeping(why).size());
        assertSame(why, failureOf(asked));
        assertSame(why, failureOf(inFlight.acknowledged()));
        assertTrue(acked.acknowledged().isDone() && !acked.acknowledged().isCompletedExceptionally(),
                "acknowledged before the close");
        assertSame(why, assertThrows(LinkException.class, () -> offer(4)));
    }

    @Test
    void dropOldestFailsTheDroppedMessagesFuture() throws Exception {
        SendQueue small = new SendQueue(1 << 20, 1, new LinkCounters());
        CompletableFuture<Void> asked = offer(small, 1, WhenFull.DROP_OLDEST).acknowledged();
        offer(small, 2, WhenFull.DROP_OLDEST);
        LinkException e = (LinkException) failureOf(asked);
        assertEquals(ErrorCode.QUEUE_FULL, e.code());
        assertEquals(1, small.messages());
    }

    @Test
    void aFutureAskedAfterASecondCloseFailsWithTheFirstReason() throws Exception {
        QueuedMessage p = offer(1);
        LinkException refused = new LinkException(ErrorCode.FORBIDDEN, "uplink refused");
        queue.close(refused);
        queue.close(new LinkException(ErrorCode.SHUTTING_DOWN, "endpoint closed"));
        assertSame(refused, failureOf(p.acknowledged()));
        assertSame(refused, assertThrows(LinkException.class, () -> offer(2)));
    }

    @Test
    void droppedMessagesWhoseFuturesWereAskedForAreNotHeldWhileNoAckComes() throws Exception {
        SendQueue small = new SendQueue(1 << 20, 3, new LinkCounters());
        for (int seq = 1; seq <= 10_000; seq++) {
            offer(small, seq, WhenFull.DROP_OLDEST).acknowledged(); // as requestAsync asks, every time
        }
        assertEquals(3, small.messages());
        assertTrue(small.futuresWatched() <= 2 * 3 + 64, small.futuresWatched() + " futures held for 3 messages");
    }

    @Test
    void anAckCountsControlMessagesInFlightButOnlyDataMovesTheFutures() throws Exception {
        SendQueue.Run run = new SendQueue.Run();
        QueuedMessage one = offer(1);
        assertEquals(1, queue.next(null, run));
        queue.offerControl(ENVELOPE.pack(9, Command.REPLY, new byte[3]));
        assertEquals(1, queue.next(null, run)); // the REPLY, after 1
        QueuedMessage two = offer(2);
        assertEquals(1, queue.next(null, run));
        CompletableFuture<Void> second = two.acknowledged();
        queue.acknowledge(null, 2); // 1 and the REPLY
        assertTrue(one.acknowledged().isDone());
        assertFalse(second.isDone(), "the REPLY took the second place in the ACK");
        assertEquals(1, queue.messages());
        queue.acknowledge(null, 1);
        assertTrue(second.isDone());
        assertEquals(0, queue.bytes());
    }

    @Test
    void theInFlightRingGrowsPastItsFirstSizeInOrder() throws Exception {
        QueuedMessage[] sent = new QueuedMessage[600];
        for (int i = 0; i < 300; i++) {
            sent[i] = offer(i + 1);
        }
        List<Long> order = new ArrayList<>();
        assertEquals(300, write(queue, 1000, order));
        queue.acknowledge(null, 100); // the ring grew; its head moves on, and it wraps
        for (int i = 300; i < sent.length; i++) {
            sent[i] = offer(i + 1);
        }
        assertEquals(300, write(queue, 1000, order));
        assertEquals(LongStream.rangeClosed(1, 600).boxed().toList(), order, "written in the order queued");
        assertEquals(500, queue.messages());
        CompletableFuture<Void> f = sent[598].acknowledged();
        queue.acknowledge(null, 498);
        assertTrue(sent[597].acknowledged().isDone());
        assertFalse(f.isDone());
        queue.acknowledge(null, 2);
        assertTrue(f.isDone());
        assertEquals(0, queue.messages());
        assertEquals(0, queue.bytes());
    }

    @Test
    void anAcknowledgedMessagesFutureIsDoneForEveryCallerAtOnce() throws Exception {
        int n = 100_000;
        QueuedMessage[] all = new QueuedMessage[n];
        for (int i = 0; i < n; i++) {
            all[i] = offer(1);
        }
        assertEquals(n, write(n));
        queue.acknowledge(null, n);
        AtomicInteger notDone = new AtomicInteger();
        CyclicBarrier together = new CyclicBarrier(2);
        Runnable ask = () -> {
            try {
                for (int i = 0; i < n; i += 100) {
                    together.await(10, TimeUnit.SECONDS);
                    for (int j = i; j < i + 100; j++) {
                        if (!all[j].acknowledged().isDone()) {
                            notDone.incrementAndGet();
                        }
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        Thread one = new Thread(ask);
        Thread two = new Thread(ask);
        one.start();
        two.start();
        one.join();
        two.join();
        assertEquals(0, notDone.get(), "a second caller got the future before it was completed");
    }

    @Test
    void smallMessagesShareASegmentAndGoOutAsOneRunWhileLargeOnesKeepTheirOwnArray() throws Exception {
        for (int seq = 1; seq <= 50; seq++) {
            offer(seq);
        }
        QueuedMessage large = new QueuedMessage(queue, 51);
        queue.offerData(large, ENVELOPE, Command.DATA, new byte[SendQueue.OWN_ARRAY_BYTES], WhenFull.FAIL, 0,
                "peer");
        offer(52);
        SendQueue.Run run = new SendQueue.Run();
        assertEquals(50, queue.next(null, run), "fifty small messages, back to back in one array");
        assertEquals(1, queue.next(null, run));
        assertEquals(0, run.offset, "the large message is an array of its own");
        assertEquals(run.bytes.length, run.length);
        assertEquals(1, queue.next(null, run));
        assertEquals(0, queue.next(null, run));
    }

    @Test
    void aRunHoldsWhatWasPackedSinceTheLastTakeAndAnAckCanEndInsideIt() throws Exception {
        QueuedMessage[] sent = new QueuedMessage[16];
        for (int seq = 1; seq <= 10; seq++) {
            sent[seq] = offer(seq);
        }
        SendQueue.Run run = new SendQueue.Run();
        assertEquals(10, queue.next(null, run), "ten messages packed back to back: one run");
        int ten = run.length;
        for (int seq = 11; seq <= 15; seq++) {
            sent[seq] = offer(seq);
        }
        assertEquals(5, queue.next(null, run), "packed after the take, into the same segment: a run of their own");
        assertEquals(ten, run.offset, "right after the first run");
        CompletableFuture<Void> fourth = sent[4].acknowledged();
        CompletableFuture<Void> fifth = sent[5].acknowledged();
        queue.acknowledge(null, 4); // inside the first run
        assertTrue(fourth.isDone() && !fifth.isDone());
        assertEquals(11, queue.messages());
        queue.linkLost(null, null);
        List<Long> order = new ArrayList<>();
        assertEquals(11, write(queue, 100, order));
        assertEquals(LongStream.rangeClosed(5, 15).boxed().toList(), order, "written again from the fifth on");
        queue.acknowledge(null, 6); // 5..10
        assertTrue(fifth.isDone() && sent[10].acknowledged().isDone() && !sent[11].acknowledged().isDone());
        assertEquals(5, queue.messages());
        long left = 0;
        for (int seq = 11; seq <= 15; seq++) {
            left += ENVELOPE.packedLength(Command.DATA, new byte[seq]);
        }
        assertEquals(left, queue.bytes(), "the bytes of 11 to 15");
        queue.acknowledge(null, 5);
        assertEquals(0, queue.bytes());
    }

    @Test
    void aPackedMessageQueuedBetweenSmallOnesKeepsItsPlace() throws Exception {
        offer(1);
        offer(2);
        queue.addData(ENVELOPE.pack(3, Command.DATA, new byte[5])); // a gateway's, already packed
        offer(4);
        List<Long> order = new ArrayList<>();
        assertEquals(4, write(queue, 10, order));
        assertEquals(List.of(1L, 2L, 3L, 4L), order);
        queue.acknowledge(null, 4);
        assertEquals(0, queue.messages());
        assertEquals(0, queue.bytes());
    }

    @Test
    void messagesPackedBetweenAcksAndLostLinksComeOutWholeAndInOrder() throws Exception {
        List<Long> order = new ArrayList<>();
        for (int round = 1; round <= 3; round++) {
            offer(round);
            assertEquals(1, write(queue, 10, order));
            offer(round + 10); // queued while the first is in flight: it must not overwrite it
            queue.linkLost(null, null); // both are written from the segment again
            assertEquals(2, write(queue, 10, order));
            queue.acknowledge(null, 1);
            offer(round + 20);
            assertEquals(1, write(queue, 10, order));
            queue.acknowledge(null, 2); // empty
            assertEquals(0, queue.messages());
        }
        assertEquals(List.of(1L, 1L, 11L, 21L, 2L, 2L, 12L, 22L, 3L, 3L, 13L, 23L), order);
    }

    @Test
    void anAckForWhatALinkIsStillCopyingChangesNoneOfItsBytes() throws Exception {
        offer(50);
        SendQueue.Run run = new SendQueue.Run();
        assertEquals(1, queue.next(null, run)); // the link copies it in pieces, say
        queue.acknowledge(null, 1); // a peer that acknowledges it before it was all written: the queue is empty
        offer(51);
        offer(52);
        byte[] whole = Arrays.copyOfRange(run.bytes, run.offset, run.offset + run.length);
        assertEquals(50, WireCodec.standard().decode(whole).sequence(), "the run still holds the message");
        assertEquals(2, write(10));
    }

    @Test
    void anAckReleasesNoMoreThanTheLinkTook() throws Exception {
        SendQueue.Run run = new SendQueue.Run();
        QueuedMessage a = offer(1);
        assertEquals(1, queue.next(null, run));
        QueuedMessage b = offer(2);
        assertEquals(1, queue.next(null, run));
        QueuedMessage c = offer(3);
        queue.linkLost(null, null); // a and b are in flight, to be written again
        assertEquals(1, queue.next(null, run)); // only a taken on this link
        queue.acknowledge(null, 1_000_000); // a peer that acknowledges what it was never sent
        assertTrue(a.acknowledged().isDone());
        assertFalse(b.acknowledged().isDone(), "b was not written on this link");
        assertFalse(c.acknowledged().isDone(), "c was never taken");
        assertEquals(2, queue.messages());
        assertEquals(2, write(10));
    }

    @Test
    void dropOldestDropsWhatWasNotTakenAndLeavesWhatIsInFlight() throws Exception {
        SendQueue small = new SendQueue(1 << 20, 3, new LinkCounters());
        QueuedMessage[] sent = new QueuedMessage[6];
        for (int seq = 1; seq <= 3; seq++) {
            sent[seq] = offer(small, seq, WhenFull.DROP_OLDEST);
        }
        SendQueue.Run run = new SendQueue.Run();
        assertEquals(1, small.next(null, run)); // 1 in flight
        assertEquals(1, WireCodec.standard().decode(run.bytes, run.offset, run.length).sequence());
        assertTrue(run.offset == 0 && run.length == run.bytes.length, "under DROP_OLDEST, a message has an array of"
                + " its own: one in flight must not hold on to a segment of dropped ones");
        sent[4] = offer(small, 4, WhenFull.DROP_OLDEST); // drops 2
        sent[5] = offer(small, 5, WhenFull.DROP_OLDEST); // drops 3
        List<Long> order = new ArrayList<>(List.of(1L));
        assertEquals(2, write(small, 10, order));
        assertEquals(List.of(1L, 4L, 5L), order);
        small.acknowledge(null, 3);
        for (int seq : new int[] {1, 4, 5}) {
            assertTrue(sent[seq].acknowledged().isDone() && !sent[seq].acknowledged().isCompletedExceptionally());
        }
        for (int seq : new int[] {2, 3}) {
            assertTrue(sent[seq].acknowledged().isCompletedExceptionally(), seq + " was dropped");
        }
        assertEquals(0, small.messages());
        assertEquals(0, small.bytes());
    }

    @Test
    void controlGoesBeforeDataAndCloseKeepingGivesBackEveryMessageInItsOrder() throws Exception {
        offer(1);
        assertEquals(1, queue.next(null, new SendQueue.Run())); // 1 in flight
        offer(2);
        queue.offerControl(Envelope.of("a@x", "b@x").pack(9, Command.REPLY, new byte[3]));
        SendQueue.Run run = new SendQueue.Run();
        assertEquals(1, queue.next(null, run));
        assertEquals(9, WireCodec.standard().decode(run.bytes, run.offset, run.length).sequence(), "the REPLY first");
        queue.offerControl(Envelope.of("a@x", "b@x").pack(8, Command.ERROR, new byte[3]));
        List<Long> kept = new ArrayList<>();
        for (byte[] packed : queue.closeKeeping(new LinkException(ErrorCode.SHUTTING_DOWN, "closing"))) {
            kept.add(WireCodec.standard().decode(packed).sequence());
        }
        assertEquals(List.of(1L, 9L, 8L, 2L), kept, "in flight, then control, then data");
        assertEquals(0, queue.messages());
    }
}
