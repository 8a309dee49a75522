package io.gma.pcservlet;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a message from an uplink goes, and how a sender hears of a message that failed. It routes by the part
 * of a name after {@code @} (protocol.md sections 3 and 6):
 *
 * <pre>
 *   to this domain        -&gt; the endpoint's queue here (LocalQueues), carried down its uplink
 *   to another domain D   -&gt; D's queue (Outbound), posted by D's forwarder
 *   to no domain          -&gt; ERROR NO_ROUTE to the sender
 * </pre>
 *
 * An ERROR this PC servlet makes ({@link #answer}) goes back the same way, whatever the bounds
 * ({@link #routeOwn}): from its destination's name, with the failed message's sequence number.
 */
final class Router implements UplinkServer.Upstream {
    private static final Logger LOG = LoggerFactory.getLogger(Router.class);
    /** The longest sentence of an ERROR this PC servlet makes, in characters. */
    static final int MAX_SENTENCE = 1000;

    private final String domain;
    private final String pcName;
    private final LocalQueues local;
    private final Outbound outbound;
    private final Metrics metrics;

    Router(String domain, LocalQueues local, Outbound outbound, Metrics metrics) {
        this.domain = domain;
        this.pcName = Name.pcServlet(domain);
        this.local = local;
        this.outbound = outbound;
        this.metrics = metrics;
    }

    @Override
    public boolean route(Message m) {
        String d = Name.domainOf(m.to());
        if (d.equals(domain)) {
            // an endpoint sent to its own domain through us: deliver it (or park it until there is room)
            if (m.to().equals(pcName)) {
                answer(m, ErrorCode.NO_ROUTE, pcName + " takes no messages of its own");
                return true;
            }
            return local.deliverAll(List.of(m), this).placed();
        }
        if (!Name.isDomain(d)) {
            answer(m, ErrorCode.NO_ROUTE, "\"" + m.to() + "\" names no domain");
            return true;
        }
        return toDomain(d, m, false);
    }

    /** Queues {@code m} for domain {@code d}: if it fits, or whatever the bounds with {@code force}. */
    private boolean toDomain(String d, Message m, boolean force) {
        return switch (outbound.offer(d, m, force)) {
            case TAKEN -> true;
            case FULL -> false;
            case CLOSED -> {
                metrics.drops.increment(); // stopped: the queues were drained and counted already
                yield true;
            }
            case TOO_MANY_DOMAINS -> {
                answer(m, ErrorCode.NO_ROUTE, domain + " already sends to " + Outbound.MAX_DOMAINS
                        + " domains, the most it may: none for domain " + d);
                yield true;
            }
        };
    }

    /** A message queued for an endpoint of this domain that will never reach it: its sender is told. */
    @Override
    public void undeliverable(byte[] packed, ErrorCode code, String reason) {
        metrics.drops.increment();
        answer(Packed.command(packed), Packed.from(packed), Packed.to(packed), Packed.sequence(packed), code, reason);
    }

    /** Tells the sender of {@code m} it failed: ERROR from its destination, with its sequence number. */
    void answer(Message m, ErrorCode code, String reason) {
        answer(m.command(), m.from(), m.to(), m.sequence(), code, reason);
    }

    private void answer(Command command, String from, String to, long sequence, ErrorCode code, String reason) {
        if (command == Command.REPLY || command == Command.ERROR) {
            LOG.debug("{}: {} from {} to {} lost: {} {}", domain, command, from, to, code, reason);
            return; // an answer to an answer would go round; the requester's timeout covers it
        }
        routeOwn(Message.error(to, from, sequence, code, sentence(reason)));
    }

    /** An ERROR's sentence, at most MAX_SENTENCE characters, so that an answer's size is bounded. */
    static String sentence(String text) {
        return text.length() <= MAX_SENTENCE ? text : text.substring(0, MAX_SENTENCE - 3) + "...";
    }

    /** Routes an ERROR (made here, or from a POST's answer) whatever the bounds: they are few and small. */
    void routeOwn(Message e) {
        if (outbound.isClosed()) {
            return;
        }
        String d = Name.domainOf(e.to());
        if (d.equals(domain)) {
            if (!e.to().equals(pcName) && !local.deliverAll(List.of(e), this).placed()) {
                LOG.debug("{}: could not deliver {} to {}", domain, e.command(), e.to());
            }
        } else if (Name.isDomain(d)) {
            toDomain(d, e, true);
        }
    }

    /** Queues messages of a batch that was checked whole for room: whatever the bounds. */
    void forceAll(String d, List<Message> messages) {
        for (Message m : messages) {
            toDomain(d, m, true);
        }
    }
}
