package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * A counted message in a send queue: its packed bytes (owned here, never changed), whether it is data
 * (bounded by the queue's limits) or control (never waits), and, being the future its sender holds, completed
 * when the peer acknowledges it. One object a message: acknowledging thousands of them touches no more.
 */
final class Pending extends CompletableFuture<Void> {
    final byte[] packed;
    /** packed.length, kept here so that counting an acknowledged message need not touch its bytes. */
    final int size;
    final boolean data;

    Pending(byte[] packed, boolean data) {
        this.packed = packed;
        this.size = packed.length;
        this.data = data;
    }
}
