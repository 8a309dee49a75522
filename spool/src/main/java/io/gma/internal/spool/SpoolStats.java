package io.gma.internal.spool;

/**
 * A spool's counters and fill, now.
 *
 * @param liveRecords appended and not acknowledged
 * @param diskBytes the segments' bytes on disk (acknowledged records in them included, until they go)
 * @param segments data files
 * @param appended records appended since the spool opened
 * @param acknowledged records acknowledged since it opened
 * @param recovered records not acknowledged that {@link Spool#open} found and handed out
 * @param forces forces of data and acknowledgement files
 * @param damaged damaged runs of bytes skipped (torn or corrupt records), since it opened
 * @param refusedFull appends refused because the spool or the disk was full
 */
public record SpoolStats(long liveRecords, long diskBytes, int segments, long appended, long acknowledged,
        long recovered, long forces, long damaged, long refusedFull) {
}
