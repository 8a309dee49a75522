package io.gma.internal.spool;

/**
 * How a spool works.
 *
 * @param fsync when appended records are forced to the disk
 * @param maxBytes the segments on disk together, at most
 * @param segmentBytes a segment is closed, and a new one begun, past this size
 */
public record SpoolSettings(Fsync fsync, long maxBytes, long segmentBytes) {
    public SpoolSettings {
        if (maxBytes < 1 << 20) {
            throw new IllegalArgumentException("maxSpoolBytes " + maxBytes + " is under 1 MiB");
        }
        if (segmentBytes < 64 << 10 || segmentBytes > maxBytes / 4) {
            // a quarter at most: segments go whole, so the one appended to and a few pinned by one live record
            // each must leave room for the rest
            throw new IllegalArgumentException("segmentBytes " + segmentBytes + " is outside 64 KiB.."
                    + maxBytes / 4 + " (a quarter of maxSpoolBytes " + maxBytes + ")");
        }
    }

    /** {@code fsync}, at most {@code maxBytes}, in segments of a sixteenth of that (64 KiB to 64 MiB). */
    public static SpoolSettings of(Fsync fsync, long maxBytes) {
        return new SpoolSettings(fsync, maxBytes, Math.max(64 << 10, Math.min(64L << 20, maxBytes / 16)));
    }
}
