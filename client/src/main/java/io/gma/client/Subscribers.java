package io.gma.client;

import io.gma.wire.Command;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * A producer's subscribers, each consumer's name with its filter text (empty when none), and publishing to them.
 * Consumers come with SUBSCRIBE (from the {@link Inbox}) or from the application, go with UNSUBSCRIBE, or when
 * they vanish. Any thread; a concurrent map, no lock.
 */
final class Subscribers {
    /** Sends, through the outbox, with a receipt asked for when the endpoint asks for them. */
    private final Receipts outbox;
    private final Map<String, String> filters = new ConcurrentHashMap<>();

    Subscribers(Receipts outbox) {
        this.outbox = outbox;
    }

    /**
     * Sends DATA to every subscriber whose filter the predicate accepts, each a Sent of its own (and a receipt of
     * its own); one slow subscriber fails alone.
     */
    List<Sent> publish(byte[] data, Predicate<String> filter) {
        List<Sent> sent = new ArrayList<>();
        for (Map.Entry<String, String> s : filters.entrySet()) {
            if (!filter.test(s.getValue())) {
                continue;
            }
            try {
                sent.add(outbox.send(s.getKey(), Command.DATA, data));
            } catch (EndpointException ex) {
                sent.add(outbox.refused(ex));
            }
        }
        return sent;
    }

    /** Adds {@code consumer}, or replaces its filter; null is no filter. */
    void add(String consumer, String filter) {
        filters.put(consumer, filter == null ? "" : filter);
    }

    /** Whether {@code consumer} was a subscriber; it is not any more. */
    boolean remove(String consumer) {
        return filters.remove(consumer) != null;
    }

    /** The subscribers now and their filter texts, a copy. */
    Map<String, String> snapshot() {
        return Map.copyOf(filters);
    }
}
