package io.gma.client;

import io.gma.registry.Kind;
import io.gma.registry.QueryResult;
import io.gma.wire.Command;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A consumer of monitoring events: it finds producers with SQL, subscribes to them, and sends and requests.
 *
 * <pre>{@code
 * try (Consumer c = Consumer.builder().registry(url).domain("dsg").label("collector")
 *         .onMessage(m -> System.out.println(m.from() + ": " + new String(m.data(), UTF_8))).build()) {
 *     for (List<Object> row : c.query("SELECT name FROM producers WHERE domain = 'dsg'").rows()) {
 *         c.subscribe((String) row.get(0), null);
 *     }
 * }
 * }</pre>
 */
public final class Consumer implements AutoCloseable {
    private final Endpoint endpoint;

    private Consumer(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** Options for a consumer; {@link EndpointBuilder#build()} starts and registers it. */
    public static EndpointBuilder<Consumer> builder() {
        return new EndpointBuilder<>(Kind.CONSUMER, Consumer::new);
    }

    /** The registered name, {@code <label>-<nonce>@<domain>}. */
    public String name() {
        return endpoint.name();
    }

    /**
     * Subscribes to a producer: its published events arrive at the handler as DATA.
     *
     * @param filter text the producer's application interprets (null for none)
     */
    public Sent subscribe(String producer, String filter) throws EndpointException {
        return endpoint.send(producer, Command.SUBSCRIBE, filter == null ? new byte[0]
                : filter.getBytes(StandardCharsets.UTF_8));
    }

    /** Ends a subscription (a control message: it never waits behind data). */
    public void unsubscribe(String producer) throws EndpointException {
        endpoint.sendControl(producer, Command.UNSUBSCRIBE, endpoint.nextSequence(), new byte[0]);
    }

    /**
     * Sends DATA without waiting (a notification). The queue's policy applies when the peer's queue is full.
     *
     * @return the sequence, and a future completed when the peer acknowledges it
     * @throws EndpointException QUEUE_FULL, NO_ROUTE for another domain without a PC servlet, SHUTTING_DOWN
     */
    public Sent send(String to, byte[] data) throws EndpointException {
        return endpoint.send(to, Command.DATA, data);
    }

    /** Sends DATA or an application command (0x40..0xFF), as {@link #send(String, byte[])}. */
    public Sent send(String to, Command command, byte[] data) throws EndpointException {
        return endpoint.send(to, command, data);
    }

    /**
     * Sends a REQUEST and waits for the REPLY (query/response).
     *
     * @return the reply's bytes
     * @throws EndpointException the ERROR the peer answered with, TIMEOUT, QUEUE_FULL, NO_ROUTE
     * @throws IllegalStateException when called on a link's I/O thread (from a handler): use requestAsync
     */
    public byte[] request(String to, byte[] data, Duration timeout) throws EndpointException {
        return endpoint.request(to, data, timeout);
    }

    /** Sends a REQUEST; the future completes with the REPLY's bytes, or fails as {@link #request}. */
    public CompletableFuture<byte[]> requestAsync(String to, byte[] data) {
        return endpoint.requestAsync(to, data, endpoint.requestTimeout());
    }

    /** Runs one SELECT over the registry's views. */
    public QueryResult query(String sql) throws EndpointException {
        return endpoint.query(sql);
    }

    Endpoint endpoint() {
        return endpoint;
    }

    public EndpointStats stats() {
        return endpoint.stats();
    }

    /** Unregisters, says BYE to every peer, fails what is still queued with SHUTTING_DOWN. */
    @Override
    public void close() {
        endpoint.close();
    }
}
