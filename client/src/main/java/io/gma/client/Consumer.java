package io.gma.client;

import io.gma.registry.api.Kind;
import io.gma.wire.Command;
import java.nio.charset.StandardCharsets;

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
public final class Consumer extends Endpoint {
    private Consumer(EndpointCore core) {
        super(core);
    }

    /** Options for a consumer; {@link EndpointBuilder#build()} starts and registers it. */
    public static EndpointBuilder<Consumer> builder() {
        return new EndpointBuilder<>(Kind.CONSUMER, Consumer::new);
    }

    /**
     * Subscribes to a producer: its published events arrive at the handler as DATA. With
     * {@link EndpointBuilder#receipts}, the Sent's {@code delivered()} completes once the producer has the
     * subscriber.
     *
     * @param filter text the producer's application interprets (null for none)
     */
    public Sent subscribe(String producer, String filter) throws EndpointException {
        return core().send(producer, Command.SUBSCRIBE, filter == null ? new byte[0]
                : filter.getBytes(StandardCharsets.UTF_8));
    }

    /** Ends a subscription (a control message: it never waits behind data). */
    public void unsubscribe(String producer) throws EndpointException {
        core().sendControl(producer, Command.UNSUBSCRIBE, core().nextSequence(), new byte[0]);
    }
}
