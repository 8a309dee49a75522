package io.gma.client;

import io.gma.registry.api.QueryResult;
import io.gma.wire.Command;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What every endpoint can do, producer or consumer: notification (send), query/response (request), a query
 * of the registry, statistics. {@link Producer} adds publishing, {@link Consumer} subscribing.
 */
public abstract class Endpoint implements AutoCloseable {
    private final EndpointCore core;

    Endpoint(EndpointCore core) {
        this.core = core;
    }

    /** What does the work: this class and its subclasses are its public face. */
    EndpointCore core() {
        return core;
    }

    /** The registered name, {@code <label>-<nonce>@<domain>}. */
    public String name() {
        return core.name();
    }

    /**
     * Sends DATA without waiting (a notification). The queue's policy applies when the peer's queue is full.
     * With an {@link EndpointBuilder#outbox outbox}, the message is appended there before this returns, and goes
     * out again after a crash and restart until the first hop acknowledges it.
     *
     * @return the sequence, a future completed when the peer (the first hop) acknowledges it, and with
     *     {@link EndpointBuilder#receipts} one completed when the destination took it
     * @throws EndpointException QUEUE_FULL (the peer's queue, the receipts awaited or the outbox are full, or
     *     the destination is in another domain and its PC servlet refused a message for it as full less than 1 s
     *     ago: nothing was queued or kept), NO_ROUTE for another domain, SHUTTING_DOWN; INTERNAL when the
     *     outbox's disk failed (nothing was kept)
     */
    public Sent send(String to, byte[] data) throws EndpointException {
        return core.send(to, Command.DATA, data);
    }

    /**
     * Sends DATA or an application command (0x40..0xFF), as {@link #send(String, byte[])}. The destination's
     * endpoint takes 0x40..0x45 itself (monitoring tables, docs/tables.md): an application uses 0x46..0xFF.
     */
    public Sent send(String to, Command command, byte[] data) throws EndpointException {
        return core.send(to, command, data);
    }

    /**
     * Sends a REQUEST and waits for the REPLY (query/response).
     *
     * @return the reply's bytes
     * @throws EndpointException the ERROR the peer answered with, TIMEOUT, QUEUE_FULL, NO_ROUTE
     * @throws IllegalStateException when called on a link's event loop (from a handler): use requestAsync
     */
    public byte[] request(String to, byte[] data, Duration timeout) throws EndpointException {
        return core.request(to, data, timeout);
    }

    /** Sends a REQUEST; the future completes with the REPLY's bytes, or fails as {@link #request}. */
    public CompletableFuture<byte[]> requestAsync(String to, byte[] data) {
        return core.requestAsync(to, data, core.requestTimeout());
    }

    /** Runs one SELECT over the registry's views. */
    public QueryResult query(String sql) throws EndpointException {
        return core.query(sql);
    }

    /** A snapshot of this endpoint's counters. */
    public EndpointStats stats() {
        return core.stats();
    }

    /**
     * Where this endpoint serves its counters in the Prometheus text format ({@link EndpointBuilder#metrics}),
     * such as {@code http://127.0.0.1:9464/metrics}; empty when it serves none.
     */
    public Optional<String> metricsUrl() {
        return Optional.ofNullable(core.metricsUrl());
    }

    /**
     * Unregisters, says BYE to every peer, fails what is still queued with SHUTTING_DOWN. With an outbox, what was
     * not acknowledged stays in it and goes out when the endpoint starts again with it, and a peer it holds
     * messages for is left without BYE, so that it keeps remembering which it had.
     */
    @Override
    public void close() {
        core.close();
    }
}
