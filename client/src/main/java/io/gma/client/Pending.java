package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * A counted message in a send queue: its packed bytes (owned here, never changed), whether it is data
 * (bounded by the queue's limits) or control (never waits), and the future its sender holds.
 */
final class Pending {
    final byte[] packed;
    final boolean data;
    final CompletableFuture<Void> acknowledged = new CompletableFuture<>();

    Pending(byte[] packed, boolean data) {
        this.packed = packed;
        this.data = data;
    }
}
