package io.gma.internal.link;

import io.gma.wire.Command;
import io.gma.wire.Envelope;

/**
 * Where a send queue packs its small data messages: each straight into the current segment, an array that the
 * messages after it share, right after the message before it. The messages packed since a link last took are
 * the open run, two numbers; it becomes one slice of the queue's data ring when a link takes it or something
 * else is queued after it ({@link #closeOpenRun}). So queueing a small message costs no array and no slot, and a
 * link writes a whole run with one copy.
 *
 * <p>Bytes in a segment are written once and never changed. Live data then lies in consecutive segments, so
 * they hold at most the queue's bytes plus two segments and the ends of segments that a message did not fit. A
 * segment is garbage once no queued message lies in it, and the queue lets go of its current one when it is
 * empty ({@link #release}), so an idle peer holds none.
 *
 * <p>Not thread-safe: the send queue's lock guards it.
 */
final class SegmentPacker {
    /** The largest segment; the first is {@link #FIRST_SEGMENT_BYTES}, and each one after is twice the last. */
    static final int SEGMENT_BYTES = 64 * 1024;
    /** Room for any message that goes into a segment. */
    static final int FIRST_SEGMENT_BYTES = SendQueue.OWN_ARRAY_BYTES;

    /** Where small data messages are packed, and how much of it is used; null before the first, and when empty. */
    private byte[] segment;
    private int segmentUsed;
    /**
     * The open run: the data messages packed into the segment since a slice was last made of it, from
     * openStart to segmentUsed, openCount of them. They are the newest data, after every slice in data.
     */
    private int openStart;
    private int openCount;

    /**
     * Packs a data message of {@code size} bytes (under {@link SendQueue#OWN_ARRAY_BYTES}) at the end of the open
     * run. When the segment has no room for it, the open run becomes the last slice of {@code data} first, and a
     * new segment is started.
     *
     * @param lastIndex the index of the last data message queued before this one
     */
    void pack(Envelope envelope, long sequence, Command command, int flags, byte[] payload, int size,
            SliceRing data, long lastIndex) {
        if (segment == null || segment.length - segmentUsed < size) {
            closeOpenRun(data, lastIndex);
            segment = new byte[segment == null ? FIRST_SEGMENT_BYTES : Math.min(SEGMENT_BYTES, segment.length * 2)];
            segmentUsed = 0;
            openStart = 0;
        }
        envelope.put(sequence, command, flags, payload, segment, segmentUsed);
        segmentUsed += size;
        openCount++;
    }

    /**
     * Makes the open run, if any, the last slice of {@code data}.
     *
     * @param lastIndex the index of the last data message queued, the open run's last
     */
    void closeOpenRun(SliceRing data, long lastIndex) {
        if (openCount > 0) {
            data.add(segment, openStart, segmentUsed - openStart, openCount, lastIndex - openCount + 1, null);
            openStart = segmentUsed;
            openCount = 0;
        }
    }

    /** No queued message lies in the segment any more (the open run is empty): the next one starts small. */
    void release() {
        segment = null;
    }
}
