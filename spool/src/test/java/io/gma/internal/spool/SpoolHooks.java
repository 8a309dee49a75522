package io.gma.internal.spool;

import java.util.function.Consumer;

/**
 * For tests of the spool's owners: runs {@code hook} on the committer's thread at each point where a crash must
 * lose nothing ({@code "forced"}: records forced to disk, not yet said to be durable; {@code "segmentsDeleted"}),
 * so that a test can hold the committer there and see that nothing is acknowledged before its record is durable.
 * Process-wide, as the committer's crash points are; {@link #clear} ends it.
 */
public final class SpoolHooks {
    private SpoolHooks() {
    }

    public static void onPoint(Consumer<String> hook) {
        Spool.crashPoints = hook;
    }

    public static void clear() {
        Spool.crashPoints = point -> { };
    }
}
