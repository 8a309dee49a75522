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
 * @param torn records cut short at the end of the last data file, as a crash in mid-write leaves them (never
 *     durable, so never acknowledged to anyone), cut off when it opened: 0 or 1
 * @param refusedFull appends refused because the spool or the disk was full, and writes of the committer that the
 *     disk refused (one a try: every 100 ms while it stays full)
 * @param written bytes written to its files since it opened, records and acknowledgements with their framing
 */
public record SpoolStats(long liveRecords, long diskBytes, int segments, long appended, long acknowledged,
        long recovered, long forces, long damaged, long torn, long refusedFull, long written) {
}
