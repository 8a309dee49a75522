package io.gma.internal.link;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import java.util.Arrays;
import java.util.List;

/**
 * What a {@link SendQueue} holds, in the order a link writes it: three lanes, each a {@link SliceRing}, and
 * their counts.
 *
 * <pre>
 *   control : REPLY, ERROR, UNSUBSCRIBE not taken yet; never bounded like data, so they never wait behind it
 *   data    : DATA, REQUEST, SUBSCRIBE, application commands not taken yet; bounded by maxQueuedBytes and
 *             maxQueuedMessages, together with the data in flight
 *   flight  : taken by the current link, in wire order, until the peer acknowledges them; when a link is
 *             lost, the next one writes them again first, in their order
 * </pre>
 *
 * Data messages are numbered as they are queued, from 1 ({@link #dataQueued} is the last one's index), and
 * acknowledged in that order ({@link #dataAcked}). Small data messages are packed into shared segments
 * ({@link SegmentPacker}); the others, and control messages, keep arrays of their own.
 *
 * <p>Not thread-safe: the send queue's lock guards it. The queue applies the bounds, the full-queue policy,
 * which link may take and the futures; this class only keeps the messages and counts them.
 */
final class Lanes {
    private final SliceRing control = new SliceRing(16);
    private final SliceRing data = new SliceRing(16);
    private final SliceRing flight = new SliceRing(16);
    private final SegmentPacker packer = new SegmentPacker();
    /**
     * How many slices of flight the carrier has taken, and the messages in them; those after wait to be
     * written again, after a lost link.
     */
    private int flightTaken;
    private long takenMessages;

    // read by the queue, under its lock
    /** Data messages queued so far, the last one's index; and the index of the last one acknowledged. */
    long dataQueued;
    long dataAcked;
    /** Control messages queued so far, and acknowledged so far: they too are acknowledged in the order queued. */
    long controlQueued;
    long controlAcked;
    /** Data queued and not acknowledged: what the bounds count. */
    long dataBytes;
    int dataMessages;
    /** Everything queued and not acknowledged, control included. */
    long allBytes;
    int allMessages;
    /** Bytes queued and not yet taken by a link (control, data, and flight after a lost link). */
    long unsentBytes;

    /** Queues a data message packed into an array of its own, which it keeps; its index. */
    long addData(byte[] packed, QueuedMessage m) {
        packer.closeOpenRun(data, dataQueued);
        long index = count(packed.length);
        data.add(packed, 0, packed.length, 1, index, m);
        return index;
    }

    /** Packs a small data message (under {@link SendQueue#OWN_ARRAY_BYTES}) into a segment; its index. */
    long pack(Envelope envelope, long sequence, Command command, int flags, byte[] payload, int size) {
        packer.pack(envelope, sequence, command, flags, payload, size, data, dataQueued);
        return count(size);
    }

    /** Counts a data message of {@code size} bytes as queued; its index. */
    private long count(int size) {
        dataBytes += size;
        dataMessages++;
        allBytes += size;
        allMessages++;
        unsentBytes += size;
        return ++dataQueued;
    }

    /** Queues a packed control message, which it keeps; its number among control messages, from 1. */
    long addControl(byte[] packed) {
        control.add(packed, 0, packed.length, 1, 0, null);
        allBytes += packed.length;
        allMessages++;
        unsentBytes += packed.length;
        return ++controlQueued;
    }

    /**
     * The oldest data message not taken yet, removed, when the queue keeps its {@link QueuedMessage} (a message of
     * its own array, queued under DROP_OLDEST); null when there is none such.
     */
    QueuedMessage dropOldest() {
        QueuedMessage oldest = data.isEmpty() ? null : data.pending(0);
        if (oldest != null) {
            int length = data.length(0);
            dataBytes -= length;
            dataMessages--;
            allBytes -= length;
            allMessages--;
            unsentBytes -= length;
            data.removeFirst();
        }
        return oldest;
    }

    /**
     * Puts into {@code run} the next messages to write: what a lost link had in flight first, then control, then
     * data, a slice at a time. They are in flight from then on.
     *
     * @return how many messages the run holds; 0 when nothing waits
     */
    int take(SendQueue.Run run) {
        int i = flightTaken;
        if (i == flight.size()) {
            if (data.isEmpty() && control.isEmpty()) {
                packer.closeOpenRun(data, dataQueued);
            }
            if (!control.isEmpty()) {
                control.moveFirstTo(flight);
            } else if (!data.isEmpty()) {
                data.moveFirstTo(flight);
            } else {
                return 0;
            }
        }
        flightTaken = i + 1;
        takenMessages += flight.count(i);
        unsentBytes -= flight.length(i);
        run.bytes = flight.array(i);
        run.offset = flight.offset(i);
        run.length = flight.length(i);
        return flight.count(i);
    }

    /**
     * Releases the {@code count} oldest messages in flight, or all that were taken if fewer.
     *
     * @return how many were released
     */
    long release(long count) {
        long released = Math.min(count, takenMessages);
        takenMessages -= released;
        for (long n = released; n > 0;) {
            int messages = flight.count(0);
            if (messages <= n) {
                release(flight.length(0), messages, flight.index(0));
                flight.removeFirst();
                flightTaken--;
            } else {
                messages = (int) n; // the first messages of a run: the rest stays in flight
                int bytes = bytesOf(flight.array(0), flight.offset(0), messages);
                release(bytes, messages, flight.index(0));
                flight.dropFirstMessages(messages, bytes);
            }
            n -= messages;
        }
        if (allMessages == 0) {
            packer.release(); // no message lies in its segment any more
        }
        return released;
    }

    /** {@code messages} messages of {@code bytes} are gone, the first with data index {@code index}. */
    private void release(int bytes, int messages, long index) {
        allBytes -= bytes;
        allMessages -= messages;
        if (index != 0) {
            dataBytes -= bytes;
            dataMessages -= messages;
            dataAcked = index + messages - 1;
        } else {
            controlAcked += messages;
        }
    }

    /** The length of the first {@code messages} messages packed from {@code array[offset]}. */
    private static int bytesOf(byte[] array, int offset, int messages) {
        int at = offset;
        for (int i = 0; i < messages; i++) {
            at += Envelope.lengthAt(array, at);
        }
        return at - offset;
    }

    /** The link that took what is in flight is lost: all of it is to be written again, first, in its order. */
    void putBackFlight() {
        for (int i = 0; i < flightTaken; i++) {
            unsentBytes += flight.length(i);
        }
        flightTaken = 0;
        takenMessages = 0;
    }

    /**
     * Empties every lane.
     *
     * @param keep where each message goes, packed, oldest first (in flight, then control, then data); null: nowhere
     */
    void clear(List<byte[]> keep) {
        packer.closeOpenRun(data, dataQueued);
        for (SliceRing ring : List.of(flight, control, data)) {
            for (int i = 0; keep != null && i < ring.size(); i++) {
                byte[] array = ring.array(i);
                for (int at = ring.offset(i), end = at + ring.length(i); at < end;) {
                    int length = Envelope.lengthAt(array, at);
                    keep.add(Arrays.copyOfRange(array, at, at + length));
                    at += length;
                }
            }
            ring.clear();
        }
        flightTaken = 0;
        takenMessages = 0;
        packer.release();
        dataBytes = 0;
        dataMessages = 0;
        allBytes = 0;
        allMessages = 0;
        unsentBytes = 0;
    }
}
