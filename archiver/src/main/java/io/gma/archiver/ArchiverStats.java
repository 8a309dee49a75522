package io.gma.archiver;

/**
 * What an archiver did since it started ({@link Archiver#stats()}): counts of rows, and of the periods in which a
 * producer's rows may be missing from the archive.
 *
 * @param rowsStored rows written to the database, each once (those caught up included)
 * @param rowsDuplicate rows that came again (a re-delivery, a catch-up that overlapped what had come) and were
 *     not stored twice
 * @param rowsCaughtUp rows stored from a producer's history, asked for when the archiver found the producer
 *     (first, or again after a restart or after rows were dropped)
 * @param gaps periods in which a producer's rows may be missing: the archiver was not following it, and it keeps
 *     no history back to the last row the archive has of it (each is logged, naming the producer and the period)
 * @param gapSeconds the length of those periods together, in seconds
 * @param rowsDropped rows that came while the write queue was full (the database slower than the rows, or down),
 *     not stored: the producer is asked for them again, as after a gap
 * @param rowsRefused rows the database refused (each logged with its sentence), not stored
 * @param rowsDeleted rows deleted as older than the retention
 * @param storeFailures writes that failed because the database could not be reached, and were tried again
 * @param queued rows waiting to be written now
 * @param tablesArchived tables archived now
 * @param tablesWaiting tables named to archive that the registry does not declare yet
 */
public record ArchiverStats(long rowsStored, long rowsDuplicate, long rowsCaughtUp, long gaps, long gapSeconds,
        long rowsDropped, long rowsRefused, long rowsDeleted, long storeFailures, long queued, int tablesArchived,
        int tablesWaiting) {
}
