package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Peer;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests an endpoint awaits answers to, by sequence number: each is answered once, by a REPLY or an ERROR
 * from the endpoint it went to (or an ERROR from this endpoint's own PC servlet), or fails when its timeout
 * passes, its peer is unreachable or the endpoint closes. A concurrent map, no lock; the timeouts wait in the
 * endpoint's timer.
 */
final class Requests {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final String name;
    private final Outbox outbox;
    /** This domain's PC servlet, or null. */
    private final Peer uplink;
    private final Counters counters;
    private final ScheduledExecutorService timer;
    private final Map<Long, Awaited> awaited = new ConcurrentHashMap<>();

    /** What a REPLY or an ERROR is to the requests (and the {@link Receipts}) awaited. */
    sealed interface Answer permits Awaited, Receipts.Awaited, Unmatched {
    }

    /** A request waiting for its REPLY or ERROR; as an {@link Answer}, the one answered, now taken. */
    record Awaited(String to, CompletableFuture<byte[]> reply) implements Answer {
    }

    /** An answer that answers nothing awaited. */
    enum Unmatched implements Answer {
        /** Not awaited (any more): the answer was resent, or came too late. */
        NOT_AWAITED,
        /** It came from another than the request's destination: refused (logged, counted), not delivered. */
        REFUSED
    }

    /** @param name the endpoint's, for the log */
    Requests(String name, Outbox outbox, Peer uplink, Counters counters, ScheduledExecutorService timer) {
        this.name = name;
        this.outbox = outbox;
        this.uplink = uplink;
        this.counters = counters;
        this.timer = timer;
    }

    /** The answers awaited now. */
    int awaited() {
        return awaited.size();
    }

    /** Sends a REQUEST; the future completes with the REPLY's bytes, or fails (the ERROR, TIMEOUT, a refusal). */
    CompletableFuture<byte[]> requestAsync(String to, byte[] data, Duration timeout) {
        return requestAsync(to, Command.REQUEST, data, timeout);
    }

    /**
     * Sends {@code command}, a REQUEST or an application command its destination answers with REPLY or ERROR
     * (the table commands), and awaits the answer as {@link #requestAsync(String, byte[], Duration)}.
     */
    CompletableFuture<byte[]> requestAsync(String to, Command command, byte[] data, Duration timeout) {
        long seq = outbox.nextSequence();
        CompletableFuture<byte[]> reply = new CompletableFuture<>();
        awaited.put(seq, new Awaited(to, reply));
        reply.whenComplete((r, ex) -> awaited.remove(seq));
        try {
            outbox.send(to, command, data, seq).acknowledged().whenComplete((ok, ex) -> {
                if (ex != null) {
                    reply.completeExceptionally(ex);
                }
            });
        } catch (EndpointException ex) {
            reply.completeExceptionally(ex);
            return reply;
        } catch (RuntimeException ex) { // refused before it was queued (to itself, too large): nothing is awaited
            reply.completeExceptionally(ex);
            throw ex;
        }
        ScheduledFuture<?> expiry;
        try {
            expiry = timer.schedule(() -> reply.completeExceptionally(new EndpointException(ErrorCode.TIMEOUT,
                    "no reply from " + to + " to request " + Long.toUnsignedString(seq) + " within "
                    + timeout.toMillis() + " ms")), timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            reply.completeExceptionally(new EndpointException(ErrorCode.SHUTTING_DOWN, "the endpoint is closing"));
            return reply;
        }
        // answered requests must not wait in the timer's queue, holding their replies, until they would expire
        reply.whenComplete((r, ex) -> expiry.cancel(false));
        return reply;
    }

    /** Sends a REQUEST and waits for its answer; never on a link's event loop, which must read it. */
    byte[] request(String to, byte[] data, Duration timeout) throws EndpointException {
        if (IoThreads.isCurrent()) {
            throw new IllegalStateException("request() would block this link's event loop, which must read the"
                    + " reply: call requestAsync() from a message handler");
        }
        try {
            return requestAsync(to, data, timeout).get();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.TIMEOUT, "interrupted waiting for " + to, ex);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof EndpointException) {
                throw (EndpointException) ex.getCause();
            }
            throw new EndpointException(ErrorCode.INTERNAL, "request to " + to + " failed: " + ex.getCause(), ex);
        }
    }

    /**
     * What {@code m}, a REPLY or ERROR that came from {@code from}, answers. It takes its request from those
     * awaited only when {@link #mayAnswer} says so, so that nobody else can answer for it; taking it is what
     * makes the answer exactly-once.
     */
    Answer answered(Message m, Peer from) {
        Awaited a = awaited.get(m.sequence());
        if (a == null) {
            return Unmatched.NOT_AWAITED;
        }
        if (!mayAnswer(a.to(), m, from, uplink)) {
            counters.refusedAnswers.increment();
            LOG.info("{}: refused {} {} from {}: request {} went to {}, and only it answers it", name, m.command(),
                    Long.toUnsignedString(m.sequence()), m.from(), Long.toUnsignedString(m.sequence()), a.to());
            return Unmatched.REFUSED;
        }
        return awaited.remove(m.sequence(), a) ? a : Unmatched.NOT_AWAITED;
    }

    /**
     * Whether {@code m}, a REPLY or ERROR that came from {@code from}, may answer a message this endpoint sent to
     * {@code to}: it comes from that endpoint (PC servlets that cannot deliver a message answer in its
     * destination's name), or it is an ERROR from this endpoint's own PC servlet, {@code uplink}, on its uplink
     * (it refused to carry the message). The rule of requests and of receipts alike.
     */
    static boolean mayAnswer(String to, Message m, Peer from, Peer uplink) {
        return to.equals(m.from()) || m.command() == Command.ERROR && from == uplink && uplink != null
                && m.from().equals(uplink.name());
    }

    /** Fails every request to {@code peerName} with {@code why}. */
    void failTo(String peerName, EndpointException why) {
        awaited.values().removeIf(a -> a.to().equals(peerName) && a.reply().completeExceptionally(why));
    }

    /** Fails every request awaited with {@code why}. */
    void failAll(EndpointException why) {
        awaited.values().forEach(a -> a.reply().completeExceptionally(why));
    }
}
