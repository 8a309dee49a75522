package io.gma.internal.spool;

/** When a spool forces what it wrote to the disk, before it says the record is durable. */
public enum Fsync {
    /** Each append is forced on its own before it is durable: the safest and the slowest. */
    ALWAYS,
    /**
     * Group commit: one force covers every record appended while the one before it ran, and each record is
     * durable once a force that covers it has returned. The default.
     */
    BATCH,
    /** Never forced by the spool: durable once written to the operating system, which a power loss can undo. */
    NEVER
}
