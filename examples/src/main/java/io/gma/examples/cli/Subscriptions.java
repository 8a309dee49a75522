package io.gma.examples.cli;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.registry.api.QueryResult;
import io.gma.wire.Name;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Objects;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A consumer's subscriptions to the producers an SQL query names (its first column), kept as they come and go:
 * the query runs again every period; a producer that appears is subscribed to, one that left (unregistered or its
 * lease expired) is dropped, one that registered again (a restart) is subscribed to again. The consumer itself and
 * names that are not producers are never subscribed to. What happens is told, a line each, to {@code notes}.
 */
final class Subscriptions implements AutoCloseable {
    /** Names a round checks against the producers view at once: an IN list this long stays a short query. */
    private static final int CHECK_AT_ONCE = 200;
    /** A failed subscription is tried again after a back-off that doubles up to this. */
    private static final long MAX_BACK_OFF_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Consumer consumer;
    private final String sql;
    private final java.util.function.Consumer<String> notes;
    /**
     * Producer subscribed to, with the registered_at it had then: a new one means it restarted. Written by the
     * rounds, and by a failed subscription's completion on a client thread, so concurrent: no lock is held
     * while the registry or a peer is asked.
     */
    private final Map<String, Object> subscribed = new ConcurrentHashMap<>();
    /** Producers whose subscription failed: when to try again, and why it failed last. */
    private final Map<String, Failure> failures = new ConcurrentHashMap<>();
    /** Names the query gave that are not producers, told once each while the query gives them. */
    private final Set<String> skipped = new HashSet<>();
    private final ScheduledExecutorService rounds = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "gma-subscriptions");
        t.setDaemon(true);
        return t;
    });
    private final long periodNanos;
    private String lastFailure;
    private volatile boolean closed;

    /**
     * Runs the first round now, then one every {@code period}.
     *
     * @throws EndpointException the registry refused the query or did not answer
     * @throws IllegalArgumentException the query's first column holds something that is not an endpoint name
     */
    Subscriptions(Consumer consumer, String sql, Duration period, java.util.function.Consumer<String> notes)
            throws EndpointException {
        this.consumer = consumer;
        this.sql = sql;
        this.notes = notes;
        this.periodNanos = period.toNanos();
        round(true);
        rounds.scheduleWithFixedDelay(this::laterRound, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A subscription that failed: how often in a row, when to try again, and the last reason told. */
    private record Failure(int times, long retryAt, String why) {
    }

    private void laterRound() {
        try {
            round(false);
            if (lastFailure != null) {
                notes.accept("the registry answers again: following " + subscribed.size() + " producers");
                lastFailure = null;
            }
        } catch (EndpointException | IllegalArgumentException e) {
            if (closed) {
                return; // the query was interrupted by close
            }
            // the registry restarting, or a name in the answer: subscriptions stay as they are until it answers
            if (!Objects.equals(e.getMessage(), lastFailure)) {
                notes.accept("cannot refresh the subscriptions (" + e.getMessage() + "); trying again");
                lastFailure = e.getMessage();
            }
        } catch (RuntimeException e) {
            if (!closed) {
                notes.accept("cannot refresh the subscriptions: " + e);
            }
        }
    }

    private void round(boolean first) throws EndpointException {
        Set<String> named = new LinkedHashSet<>();
        QueryResult answer = consumer.query(sql);
        for (List<Object> row : answer.rows()) {
            Object value = row.isEmpty() ? null : row.get(0);
            if (value == null || !Name.isName(value.toString())) {
                throw new IllegalArgumentException("the query's first column (" + answer.columns().get(0)
                        + ") holds " + (value == null ? "NULL" : "\"" + value + "\"") + ", not an endpoint name "
                        + Name.NAME_RULE + ": select the name, as in SELECT name FROM producers WHERE ...");
            }
            if (!value.equals(consumer.name())) {
                named.add(value.toString());
            }
        }
        Map<String, Object> producers = registered(named);
        for (String name : named) {
            if (!producers.containsKey(name) && skipped.add(name)) {
                notes.accept(name + " is not a producer: not subscribed to");
            }
        }
        skipped.retainAll(named);
        failures.keySet().retainAll(producers.keySet());
        long now = System.nanoTime();
        for (Map.Entry<String, Object> p : producers.entrySet()) {
            Object was = subscribed.get(p.getKey());
            Failure failed = failures.get(p.getKey());
            if ((was == null || !was.equals(p.getValue())) && (failed == null || now - failed.retryAt() >= 0)) {
                subscribe(p.getKey(), p.getValue(), was != null);
            }
        }
        for (String name : new ArrayList<>(subscribed.keySet())) {
            if (!producers.containsKey(name)) {
                // nothing is sent to it: it is gone, and an UNSUBSCRIBE would wait in PC servlets for nobody
                subscribed.remove(name);
                notes.accept(name + " left");
            }
        }
        if (first) {
            notes.accept("following " + subscribed.size() + (subscribed.size() == 1 ? " producer" : " producers")
                    + (answer.truncated() ? " (the query's answer was truncated: narrow it)" : ""));
        }
    }

    /** Which of {@code names} are producers, with when each registered. */
    private Map<String, Object> registered(Set<String> names) throws EndpointException {
        Map<String, Object> found = new HashMap<>();
        List<String> all = new ArrayList<>(names);
        for (int from = 0; from < all.size(); from += CHECK_AT_ONCE) {
            StringBuilder in = new StringBuilder();
            for (String name : all.subList(from, Math.min(all.size(), from + CHECK_AT_ONCE))) {
                in.append(in.length() == 0 ? "" : ", ").append('\'').append(name.replace("'", "''")).append('\'');
            }
            for (List<Object> row : consumer.query("SELECT name, registered_at FROM producers WHERE name IN (" + in
                    + ")").rows()) {
                found.put(String.valueOf(row.get(0)), String.valueOf(row.get(1)));
            }
        }
        return found;
    }

    private void subscribe(String producer, Object registeredAt, boolean again) {
        subscribed.put(producer, registeredAt);
        try {
            consumer.subscribe(producer, null).acknowledged().whenComplete((ok, failed) -> {
                if (failed != null) {
                    forget(producer, registeredAt, failed);
                } else if (failures.remove(producer) != null || !again) {
                    notes.accept("subscribed to " + producer);
                } else {
                    notes.accept(producer + " registered again: subscribed again");
                }
            });
        } catch (EndpointException e) {
            forget(producer, registeredAt, e);
        }
    }

    /**
     * A subscription that failed is tried again in a later round, if the producer is still there, after a back-off
     * that doubles from the period up to 30 s; a reason is told once, not at every try.
     */
    private void forget(String producer, Object registeredAt, Throwable why) {
        if (subscribed.remove(producer, registeredAt)) {
            Throwable cause = why instanceof CompletionException && why.getCause() != null ? why.getCause() : why;
            Failure before = failures.get(producer);
            int times = before == null ? 1 : Math.min(before.times() + 1, 30);
            long backOff = Math.min(MAX_BACK_OFF_NANOS, periodNanos << Math.min(times - 1, 20));
            failures.put(producer, new Failure(times, System.nanoTime() + backOff, cause.getMessage()));
            if (before == null || !Objects.equals(before.why(), cause.getMessage())) {
                notes.accept("cannot subscribe to " + producer + " (" + cause.getMessage() + "); trying again, at"
                        + " most every " + TimeUnit.NANOSECONDS.toSeconds(MAX_BACK_OFF_NANOS) + " s");
            }
        }
    }

    /** Stops the rounds; the consumer's close ends the subscriptions (it says BYE to its producers). */
    @Override
    public void close() {
        closed = true;
        rounds.shutdownNow();
    }
}
