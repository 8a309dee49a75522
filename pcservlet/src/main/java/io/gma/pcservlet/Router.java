package io.gma.pcservlet;

import io.gma.internal.spool.SpoolException;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import java.util.List;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a message from an uplink goes, and how a sender hears of a message that failed. It routes by the part
 * of a name after {@code @} (protocol.md sections 3 and 6):
 *
 * <pre>
 *   to this domain        -&gt; the endpoint's queue here (LocalQueues), carried down its uplink
 *   to another domain D   -&gt; D's queue (Outbound), posted by D's forwarder
 *                            (its endpoint full, at its share: ERROR QUEUE_FULL to the sender)
 *   to no domain          -&gt; ERROR NO_ROUTE to the sender
 * </pre>
 *
 * A message for an endpoint in another domain that said it is full, and whose share of that domain's queue is
 * taken, is refused alone ({@link #refuseFull}): the uplink it came on goes on, so that one slow destination
 * never holds up the others of a sender. What does not fit for the whole domain is not taken (NO_ROOM: the
 * uplink parks).
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
    private final Spooling spooling;

    Router(String domain, LocalQueues local, Outbound outbound, Metrics metrics, Spooling spooling) {
        this.spooling = spooling;
        this.domain = domain;
        this.pcName = Name.pcServlet(domain);
        this.local = local;
        this.outbound = outbound;
        this.metrics = metrics;
    }

    @Override
    public UplinkServer.Routed route(Message m, String identity) {
        if (Name.inDomain(m.to(), domain)) {
            // an endpoint sent to its own domain through us: deliver it (or park it until there is room)
            if (m.to().equals(pcName)) {
                return refused(m, pcName, ErrorCode.NO_ROUTE, pcName + " takes no messages of its own");
            }
            if (!spooling.on()) {
                return deliver(Queued.inMemory(m), false);
            }
            if (!local.hasRoomFor(m)) {
                return UplinkServer.Routed.NO_ROOM;
            }
            OptionalLong spooled = spool(Spooling.Lane.LOCAL, m, identity);
            return spooled.isEmpty() ? UplinkServer.Routed.NO_ROOM : deliver(new Queued(m, spooled.getAsLong()), true);
        }
        String d = Name.domainOf(m.to());
        if (!Name.isDomain(d)) {
            return refused(m, pcName, ErrorCode.NO_ROUTE, "\"" + m.to() + "\" names no domain");
        }
        if (!spooling.on()) {
            return place(d, Queued.inMemory(m), false);
        }
        DomainQueue.Offer room = outbound.wouldTake(d, m);
        if (room == DomainQueue.Offer.ENDPOINT_FULL) {
            return refuseFull(d, m, Spooling.NONE);
        }
        if (room != DomainQueue.Offer.TAKEN) {
            return UplinkServer.Routed.NO_ROOM;
        }
        OptionalLong spooled = spool(Spooling.Lane.OUTBOUND, m, identity);
        return spooled.isEmpty() ? UplinkServer.Routed.NO_ROOM : place(d, new Queued(m, spooled.getAsLong()), true);
    }

    /**
     * Appends an uplink's message to the spool; its record's number, or none when the spool is full or broken
     * (the message is then held back, as for a full queue).
     */
    private OptionalLong spool(Spooling.Lane lane, Message m, String identity) {
        try {
            return OptionalLong.of(spooling.append(lane, true, m, identity));
        } catch (SpoolException e) {
            LOG.debug("{}: {} from {} waits: {}", domain, m.command(), m.from(), e.getMessage());
            return OptionalLong.empty();
        }
    }

    /**
     * Queues {@code q} for its endpoint of this domain: if it fits, or whatever the bounds with {@code force}. One
     * not placed (no room, or closed: held uplinks drop what they park, and the endpoint sends it again) is done
     * with in the spool.
     */
    private UplinkServer.Routed deliver(Queued q, boolean force) {
        if (local.deliverAll(List.of(q), this, force).placed()) {
            return taken(q);
        }
        spooling.ack(q.spoolSeq());
        return UplinkServer.Routed.NO_ROOM;
    }

    /** What became of a message queued: taken, and spooled or not. */
    private static UplinkServer.Routed taken(Queued q) {
        return q.spoolSeq() == Spooling.NONE ? UplinkServer.Routed.TAKEN
                : new UplinkServer.Routed.Spooled(q.spoolSeq());
    }

    /**
     * Queues {@code q} for domain {@code d}: if it fits, or whatever the bounds with {@code force}. A spooled
     * message that no queue takes is done with in the spool: its sender was told, or it was counted as dropped.
     */
    private UplinkServer.Routed place(String d, Queued q, boolean force) {
        return switch (outbound.offer(d, q, force)) {
            case TAKEN -> taken(q);
            case FULL -> UplinkServer.Routed.NO_ROOM;
            case ENDPOINT_FULL -> refuseFull(d, q.message(), q.spoolSeq());
            case CLOSED -> {
                metrics.drops.increment(); // stopped: the queues were drained and counted already
                spooling.ack(q.spoolSeq());
                yield UplinkServer.Routed.TAKEN;
            }
            case TOO_MANY_DOMAINS -> {
                answer(q.message(), ErrorCode.NO_ROUTE, domain + " already sends to " + Outbound.MAX_DOMAINS
                        + " domains, the most it may: none for domain " + d);
                spooling.ack(q.spoolSeq());
                yield UplinkServer.Routed.TAKEN;
            }
        };
    }

    /**
     * A message for an endpoint of domain {@code d} that is full, its share of the queue taken: not queued, and
     * its sender gets ERROR QUEUE_FULL for it (which its endpoint reads as "that destination is full", and holds
     * back its next sends to it for a while, as a full send queue would), written before the uplink's ACK that
     * goes past it, so that the message's future fails rather than completes. Taken, so that the ACK does go past
     * it and the sender's other destinations flow; done with in the spool if it was spooled ({@code spoolSeq}).
     */
    private UplinkServer.Routed refuseFull(String d, Message m, long spoolSeq) {
        metrics.drops.increment();
        spooling.ack(spoolSeq);
        return refused(m, m.to(), ErrorCode.QUEUE_FULL, outbound.describeShare(d, m.to()));
    }

    /**
     * An uplink's message refused with {@code code}, its ERROR from {@code from}: this PC servlet, or for a full
     * destination that destination, as the sender's endpoint reads them.
     */
    private static UplinkServer.Routed refused(Message m, String from, ErrorCode code, String reason) {
        return UplinkServer.Routed.refuse(m, from, code, sentence(reason));
    }

    /** A message queued for an endpoint of this domain that will never reach it: its sender is told. */
    @Override
    public long undeliverable(byte[] packed, ErrorCode code, String reason) {
        metrics.drops.increment();
        return answer(Packed.command(packed), Packed.from(packed), Packed.to(packed), Packed.sequence(packed), code,
                reason);
    }

    /**
     * Tells the sender of {@code m} it failed: ERROR from its destination, with its sequence number. Returns the
     * ERROR's record, which {@code m}'s own waits for before it goes ({@link Spooling#ackOnceSafe}): until then a
     * crash brings {@code m} back, not nothing; or {@link Spooling#NONE} (no spool, no ERROR, or a full spool).
     */
    long answer(Message m, ErrorCode code, String reason) {
        return answer(m.command(), m.from(), m.to(), m.sequence(), code, reason);
    }

    private long answer(Command command, String from, String to, long sequence, ErrorCode code, String reason) {
        if (command == Command.REPLY || command == Command.ERROR) {
            LOG.debug("{}: {} from {} to {} lost: {} {}", domain, command, from, to, code, reason);
            return Spooling.NONE; // an answer to an answer would go round; the requester's timeout covers it
        }
        return routeOwn(Message.error(to, from, sequence, code, sentence(reason)));
    }

    /** An ERROR's sentence, at most MAX_SENTENCE characters, so that an answer's size is bounded. */
    static String sentence(String text) {
        return text.length() <= MAX_SENTENCE ? text : text.substring(0, MAX_SENTENCE - 3) + "...";
    }

    /**
     * Routes an ERROR (made here, or from a POST's answer) whatever the bounds: they are few and small. It is
     * spooled like the rest, unless the spool is full (then it goes in memory only); its record, or {@link
     * Spooling#NONE}.
     */
    long routeOwn(Message e) {
        if (outbound.isClosed()) {
            return Spooling.NONE;
        }
        String d = Name.domainOf(e.to());
        boolean here = d.equals(domain);
        if (here && e.to().equals(pcName) || !here && !Name.isDomain(d)) {
            return Spooling.NONE;
        }
        long seq;
        try {
            seq = spooling.append(here ? Spooling.Lane.LOCAL : Spooling.Lane.OUTBOUND, false, e, "");
        } catch (SpoolException full) {
            seq = Spooling.NONE;
        }
        if (!here) {
            place(d, new Queued(e, seq), true);
        } else if (deliver(new Queued(e, seq), true) == UplinkServer.Routed.NO_ROOM) {
            LOG.debug("{}: could not deliver {} to {}", domain, e.command(), e.to());
        }
        return seq;
    }

    /** Queues spooled messages of a batch that was checked whole for room: whatever the bounds. */
    void forceAll(String d, List<Queued> messages) {
        for (Queued q : messages) {
            place(d, q, true);
        }
    }
}
