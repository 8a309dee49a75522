package io.gma.client;

import io.gma.internal.link.Link;
import io.gma.internal.link.Peer;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an endpoint receives, on the event loop of the link it came on. A message whose sender is not the peer
 * that authenticated is refused (an impostor); one for another endpoint is answered NO_ROUTE; a duplicate is
 * dropped ({@link Dedup}); a REPLY or an ERROR goes to the request ({@link Requests}) or the receipt
 * ({@link Receipts}) it answers; SUBSCRIBE and UNSUBSCRIBE change the {@link Subscribers}; the rest is delivered to
 * the message handler, on the link's thread or through the executor. What it must answer (an ERROR, a handler's
 * REPLY, a receipt) goes out through the {@link Outbox}.
 *
 * <p>One sender's messages reach the handler one at a time and in order: its {@link Dedup.Seen} record is held
 * while a message is checked and delivered.
 *
 * <p>Receipts: a message other than a REQUEST that comes with REPLY_EXPECTED asks for one, an empty REPLY with
 * its sequence, sent once the message was taken: when the handler returned from it (on the link's thread or on
 * the executor), or for SUBSCRIBE and UNSUBSCRIBE when the subscribers changed. A handler that throws, no
 * handler, or an executor that refuses the message answer it with an ERROR instead, as they answer a request.
 * A duplicate is answered with a receipt too (its first copy was taken, and the first receipt may have been
 * lost on the way), but not while its first copy is still with the executor: that copy's receipt will say it.
 */
final class Inbox {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private static final byte[] NO_DATA = new byte[0];
    private final String name;
    private final EndpointBuilder<?> config;
    private final Security security;
    /** This domain's PC servlet, or null: it sends in other endpoints' names. */
    private final Peer uplink;
    private final Outbox outbox;
    private final Requests requests;
    private final Receipts receipts;
    private final Subscribers subscribers;
    /** Monitoring tables: a producer's, and a consumer's queries. */
    private final TablePublisher tables;
    private final TableMediator mediator;
    private final Counters counters;
    private final Dedup dedup = new Dedup();
    /** Messages that asked for a receipt and wait for the executor to run the handler: theirs is not sent yet. */
    private final Set<Taken> withExecutor = ConcurrentHashMap.newKeySet();

    /** A sender's message, by sequence. */
    private record Taken(String from, long sequence) {
    }

    /** @param config the handler and its executor, read as each message is delivered */
    Inbox(String name, EndpointBuilder<?> config, Peer uplink, Outbox outbox, Requests requests, Receipts receipts,
            Subscribers subscribers, TablePublisher tables, TableMediator mediator, Counters counters) {
        this.name = name;
        this.config = config;
        this.security = config.security;
        this.uplink = uplink;
        this.outbox = outbox;
        this.requests = requests;
        this.receipts = receipts;
        this.subscribers = subscribers;
        this.tables = tables;
        this.mediator = mediator;
        this.counters = counters;
    }

    /** A new link's reader. */
    Reader reader() {
        return new Reader();
    }

    /** Whether the numbers of {@code sender}'s messages are remembered (see {@link Dedup}). */
    boolean remembers(String sender) {
        return dedup.remembers(sender);
    }

    /**
     * The receiving side of one link, and what it remembers from one message to the next: a link's messages come
     * from one sender to one destination, decoded to one String each, so a reference compare finds its dedup
     * record and checks its destination, not a look-up. Its link's event loop's alone.
     */
    final class Reader {
        /** The sender of the last message taken from this link, and its dedup record. */
        private String lastSender;
        private Dedup.Seen lastSeen;
        /** The last destination taken from this link, and the name of this endpoint's that it matched. */
        private String lastTo;
        private String lastToWasOwn;

        private Reader() {
        }

        /**
         * A counted message arrived on {@code link}, which carries {@code from}'s messages (null: a peer without
         * a name).
         *
         * @return true: an endpoint takes everything; dedup drops what it had
         */
        boolean receive(Message m, Link link, Peer from) {
            if (security.authenticates() && from != uplink && !m.from().equals(link.peerName())) {
                impostor(m, link);
                return true;
            }
            take(m, from);
            return true;
        }

        /**
         * A peer said BYE, which an endpoint says only when it closes for good: it fails what it has not had
         * acknowledged instead of resending it, so its dedup window can go, and a later run under the same exact
         * name starts afresh.
         */
        void saidBye(Link link) {
            String peerName = link.peerName();
            if (peerName != null) {
                dedup.forget(peerName);
                tables.dropConsumer(peerName); // its queries end with it
            }
        }

        private void take(Message m, Peer from) {
            Command c = m.command();
            boolean answer = c == Command.REPLY || c == Command.ERROR;
            String own = name;
            if (m.to() != lastTo || lastToWasOwn != own) {
                // a stream repeats the String decoded once: a compare, not equals, unless this endpoint was renamed
                if (!m.to().equals(own)) {
                    if (!answer) {
                        error(m, ErrorCode.NO_ROUTE, "this is " + own + ", not " + m.to() + "; an endpoint does not"
                                + " route");
                    }
                    return;
                }
                lastTo = m.to();
                lastToWasOwn = own;
            }
            if (answer) {
                answer(m, from);
                return;
            }
            // one sender's messages are delivered one at a time, in order, even while an old link still
            // delivers what it had read and a new one delivers what was resent
            Dedup.Seen seen = lastSeen;
            if (seen == null || lastSender != m.from() || seen.forgotten) {
                // a link's messages come from one sender, decoded to one String: a compare, not a look-up
                seen = dedup.of(m.from());
                lastSender = m.from();
                lastSeen = seen;
            }
            synchronized (seen) {
                if (seen.due()) {
                    dedup.of(m.from()); // kept from message to message, it is recent in the LRU all the same
                }
                if (!seen.add(m.sequence())) {
                    counters.duplicates.increment();
                    if (asksReceipt(m) && (config.executor == null
                            || !withExecutor.contains(new Taken(m.from(), m.sequence())))) {
                        receipt(m);
                    }
                    return;
                }
                dispatch(m);
            }
        }
    }

    /** A REPLY or an ERROR: it completes the request or the receipt it answers, if it may. */
    private void answer(Message m, Peer from) {
        Requests.Answer a = requests.answered(m, from);
        if (a == Requests.Unmatched.NOT_AWAITED) {
            a = receipts.answered(m, from); // a request and a receipt never share a sequence number
        }
        if (a == Requests.Unmatched.REFUSED) {
            return;
        }
        if (m.command() == Command.REPLY) {
            if (a instanceof Requests.Awaited request) {
                request.reply().complete(m.sharedData()); // the caller's: a large reply is not copied
            } else if (a instanceof Receipts.Awaited receipt) {
                receipt.delivered().complete(null);
            } else {
                counters.duplicates.increment(); // resent, or a second receipt
            }
            return;
        }
        String text = m.dataAsString();
        // an error code this version does not know: reported as INTERNAL, with the peer's text
        EndpointException error = new EndpointException(ErrorText.parse(text).code(), m.from() + " answered ERROR "
                + text);
        if (error.code() == ErrorCode.QUEUE_FULL && from == uplink && uplink != null
                && !Name.inDomain(m.from(), config.domain)) {
            // this domain's PC servlet refused a message for a destination that is full (or the destination's
            // executor did): sends to it wait or fail for a while, as to a full queue
            outbox.destinationFull(m.from(), text);
        }
        if (from == uplink && uplink != null && refusedByUplink(m, error.code())) {
            // its ERROR came before the ACK that passes the message, whose future then fails with it
            outbox.refusedByUplink(m.sequence(), error);
        }
        if (error.code() == ErrorCode.NO_ROUTE && subscribers.remove(m.from())) {
            // a PC servlet found no way to a subscriber in another domain: it vanished
            LOG.info("{}: dropped subscriber {}: {}", name, m.from(), text);
        }
        if (error.code() == ErrorCode.NO_ROUTE) {
            tables.dropConsumer(m.from());
        }
        if (a instanceof Requests.Awaited request) {
            request.reply().completeExceptionally(error);
        } else if (a instanceof Receipts.Awaited receipt) {
            receipt.delivered().completeExceptionally(error);
        } else {
            LOG.warn("{}: {} reported an error on message {}: {}", name, m.from(),
                    Long.toUnsignedString(m.sequence()), text);
        }
    }

    /**
     * Whether an ERROR on the uplink is the PC servlet's refusal of the message it answers, written before the ACK
     * that passes it (docs/pcservlet.md): one from the PC servlet itself (a send rule, a name with no domain), or
     * QUEUE_FULL from a destination in another domain whose share of its queue is taken. Not the answers that
     * come from further on (a destination gone, refused by another domain): those leave the ACK as it is.
     */
    private boolean refusedByUplink(Message m, ErrorCode code) {
        return m.from().equals(Name.pcServlet(config.domain))
                || code == ErrorCode.QUEUE_FULL && !Name.inDomain(m.from(), config.domain);
    }

    /** A message on a direct link whose sender is not the peer that authenticated: refused, not delivered. */
    private void impostor(Message m, Link link) {
        String sentence = "\"" + m.from() + "\" is not the name this link's peer said in HELLO, \""
                + link.peerName() + "\"";
        LOG.info("{}: refused {} {}: {}", name, m.command(), Long.toUnsignedString(m.sequence()), sentence);
        if (link.peerName() == null || link.peerName().isEmpty() || m.command() == Command.REPLY
                || m.command() == Command.ERROR) {
            return; // nobody to tell, or an answer, which is never answered
        }
        error(link.peerName(), m.sequence(), ErrorCode.FORBIDDEN, sentence);
    }

    /** A sender's own message, delivered for the first time. */
    private void dispatch(Message m) {
        if (m.command() == Command.SUBSCRIBE) {
            subscribers.add(m.from(), m.dataAsString());
        } else if (m.command() == Command.UNSUBSCRIBE) {
            subscribers.remove(m.from());
        } else if (TableWire.isTableCommand(m.command())) {
            // monitoring tables (docs/tables.md): rows go to the consumer's queries, the rest to the producer's
            if (TableWire.isRows(m.command())) {
                mediator.receive(m);
            } else {
                tables.receive(m);
            }
        } else {
            deliver(m);
            return;
        }
        if (asksReceipt(m)) {
            receipt(m);
        }
    }

    /**
     * Whether {@code m} asks for a receipt: REPLY_EXPECTED on another command than REQUEST (whose answer is the
     * handler's REPLY).
     */
    private static boolean asksReceipt(Message m) {
        return m.replyExpected() && m.command() != Command.REQUEST;
    }

    /** Says to the sender of {@code m} that it was taken: an empty REPLY with its sequence. */
    private void receipt(Message m) {
        try {
            outbox.sendControl(m.from(), Command.REPLY, m.sequence(), NO_DATA);
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not send the receipt of {} to {}: {}", name, Long.toUnsignedString(m.sequence()),
                    m.from(), ex.getMessage());
        }
    }

    private void deliver(Message m) {
        MessageHandler handler = config.handler;
        if (handler == null) {
            if (m.replyExpected()) {
                error(m, ErrorCode.INTERNAL, name + " has no message handler");
            }
            return;
        }
        if (config.executor == null) {
            // on the event loop, without a task object per message
            if (handled(handler, m) && asksReceipt(m)) {
                receipt(m);
            }
            return;
        }
        Taken taken = asksReceipt(m) ? new Taken(m.from(), m.sequence()) : null;
        if (taken != null) {
            withExecutor.add(taken);
        }
        try {
            config.executor.execute(() -> {
                boolean took;
                try {
                    took = handled(handler, m);
                } finally {
                    if (taken != null) {
                        withExecutor.remove(taken); // before the receipt: a duplicate from now on is answered itself
                    }
                }
                if (took && taken != null) {
                    receipt(m);
                }
            });
        } catch (RejectedExecutionException ex) {
            if (taken != null) {
                withExecutor.remove(taken);
            }
            LOG.warn("{}: the handler executor refused {} from {}", name, m.command(), m.from());
            if (m.replyExpected()) {
                error(m, ErrorCode.QUEUE_FULL, "the handler executor of " + name + " refused the message");
            }
        }
    }

    /**
     * Runs the handler on {@code m}; whether it returned (a failure was answered already). As short as it was
     * before receipts: it is on the path of every message an endpoint takes.
     */
    private boolean handled(MessageHandler handler, Message m) {
        try {
            handler.onMessage(new Delivery(outbox, m));
            return true;
        } catch (Exception | LinkageError | AssertionError | StackOverflowError ex) {
            // the handler's failure is this message's, not the link's: the link goes on
            LOG.warn("{}: handler failed on {} from {}: {}", name, m.command(), m.from(), ex.toString());
            if (m.replyExpected()) {
                error(m, ErrorCode.INTERNAL, "the handler of " + name + " failed: " + ex);
            }
            return false;
        }
    }

    /** Answers {@code m} with an ERROR. */
    private void error(Message m, ErrorCode code, String sentence) {
        error(m.from(), m.sequence(), code, sentence);
    }

    /** Tells {@code to} that its message {@code seq} failed; an ERROR that cannot be sent is logged. */
    private void error(String to, long seq, ErrorCode code, String sentence) {
        try {
            outbox.sendControl(to, Command.ERROR, seq, new ErrorText(code, sentence).toBytes());
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not report {} to {}: {}", name, code, to, ex.getMessage());
        }
    }
}
