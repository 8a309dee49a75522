package io.gma.archiver;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One archived table's counts, updated by the archiver's threads: what {@link ArchiverStats} adds up, and what
 * {@code GET /metrics} shows per table.
 */
final class Counters {
    final AtomicLong stored = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();
    final AtomicLong caughtUp = new AtomicLong();
    final AtomicLong gaps = new AtomicLong();
    final AtomicLong gapMicros = new AtomicLong();
    final AtomicLong dropped = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong deleted = new AtomicLong();
}
