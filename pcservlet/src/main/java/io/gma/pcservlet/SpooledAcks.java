package io.gma.pcservlet;

import io.gma.internal.link.SendQueue;
import java.util.Arrays;

/**
 * The spooled records in one endpoint's queue at the PC servlet, and their places in it: the queue numbers its
 * data and its control messages, each in the order queued, and says how far the endpoint acknowledged each
 * ({@link SendQueue#dataAcknowledged}, {@link SendQueue#controlAcknowledged}); each time an ACK frees room, the
 * records it covered are acknowledged in the spool. Its monitor is held while a message is queued and noted, so
 * that an ACK in between finds the note.
 */
final class SpooledAcks {
    private final Spooling spooling;
    /** Set once, right after the queue is made (the queue's ACK hook needs this object first). */
    SendQueue queue;
    /** {place in its lane, record number}, oldest first, per lane. */
    private final LongPairs data = new LongPairs();
    private final LongPairs control = new LongPairs();
    /** The records an ACK covered, handed to the spool together; reused. */
    private long[] covered = new long[64];

    SpooledAcks(Spooling spooling) {
        this.spooling = spooling;
    }

    /** Under this object's monitor: record {@code seq} is the {@code place}-th message of its lane. */
    void add(boolean isControl, long place, long seq) {
        (isControl ? control : data).addLast(place, seq);
    }

    /** An ACK freed room: the records it covered are acknowledged in the spool. */
    synchronized void acknowledged() {
        // read under the monitor: a message queued and noted before covers its note (the queue's lock nests in it)
        ack(data, queue.dataAcknowledged());
        ack(control, queue.controlAcknowledged());
    }

    private void ack(LongPairs lane, long upTo) {
        int n = 0;
        while (!lane.isEmpty() && lane.first() <= upTo) {
            if (n == covered.length) {
                covered = Arrays.copyOf(covered, n * 2);
            }
            covered[n++] = lane.second();
            lane.removeFirst();
        }
        spooling.ackAll(covered, n);
    }

    /** The queue is gone and its senders were told: every record left is done with. */
    synchronized void ackAll() {
        ack(data, Long.MAX_VALUE);
        ack(control, Long.MAX_VALUE);
    }
}
