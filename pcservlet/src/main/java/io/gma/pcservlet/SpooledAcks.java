package io.gma.pcservlet;

import io.gma.internal.link.SendQueue;
import java.util.ArrayDeque;

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
    private final ArrayDeque<long[]> data = new ArrayDeque<>();
    private final ArrayDeque<long[]> control = new ArrayDeque<>();

    SpooledAcks(Spooling spooling) {
        this.spooling = spooling;
    }

    /** Under this object's monitor: record {@code seq} is the {@code place}-th message of its lane. */
    void add(boolean isControl, long place, long seq) {
        (isControl ? control : data).addLast(new long[] {place, seq});
    }

    /** An ACK freed room: the records it covered are acknowledged in the spool. */
    synchronized void acknowledged() {
        // read under the monitor: a message queued and noted before covers its note (the queue's lock nests in it)
        ack(data, queue.dataAcknowledged());
        ack(control, queue.controlAcknowledged());
    }

    private void ack(ArrayDeque<long[]> lane, long upTo) {
        int n = 0;
        for (long[] e : lane) {
            if (e[0] > upTo) {
                break;
            }
            n++;
        }
        long[] seqs = new long[n];
        for (int i = 0; i < n; i++) {
            seqs[i] = lane.pollFirst()[1];
        }
        spooling.ackAll(seqs, n);
    }

    /** The queue is gone and its senders were told: every record left is done with. */
    synchronized void ackAll() {
        ack(data, Long.MAX_VALUE);
        ack(control, Long.MAX_VALUE);
    }
}
