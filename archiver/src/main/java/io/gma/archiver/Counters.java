package io.gma.archiver;

import java.util.concurrent.atomic.AtomicLong;

/** The archiver's counts, updated by its threads: what {@link ArchiverStats} shows. */
final class Counters {
    final AtomicLong stored = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();
    final AtomicLong caughtUp = new AtomicLong();
    final AtomicLong gaps = new AtomicLong();
    final AtomicLong gapMicros = new AtomicLong();
    final AtomicLong dropped = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong deleted = new AtomicLong();
    final AtomicLong storeFailures = new AtomicLong();
}
