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
        if (segmentBytes < 64 << 10 || segmentBytes > maxBytes) {
            throw new IllegalArgumentException("segmentBytes " + segmentBytes + " is outside 64 KiB.."
                    + maxBytes + " (maxSpoolBytes)");
        }
    }

    /** {@code fsync}, at most {@code maxBytes}, in segments of a sixteenth of that (1 MiB to 64 MiB). */
    public static SpoolSettings of(Fsync fsync, long maxBytes) {
        return new SpoolSettings(fsync, maxBytes, Math.max(1 << 20, Math.min(64L << 20, maxBytes / 16)));
    }
}
