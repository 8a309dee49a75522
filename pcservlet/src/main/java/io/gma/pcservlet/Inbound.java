package io.gma.pcservlet;

import io.gma.internal.spool.SpoolException;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.ProtocolException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What comes in over the HTTP tunnel (protocol.md section 6): a POST of a batch from another domain, a batch a
 * poll brought from the via domain, and the long polls of the outbound-only domains this one relays for. A
 * batch is sorted by where each message goes, then queued whole or not at all:
 *
 * <pre>
 *   to this domain                        -&gt; the endpoint's queue here (LocalQueues)
 *   to a domain we relay for              -&gt; its relay queue, taken by its polls (Relay)
 *   from a domain we relay for, elsewhere -&gt; that domain's queue (Outbound)
 *   anything else                         -&gt; an ERROR for its sender, in the 200 answer
 * </pre>
 *
 * A batch that finds no room waits a little for some ({@link RoomSignal}), then is answered 429.
 */
final class Inbound {
    private static final Logger LOG = LoggerFactory.getLogger(Inbound.class);
    /** How long a POST may wait for room before it is answered 429. */
    static final long ADMIT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a batch may wait for its spooled records to be on disk before it is answered 503. */
    static final long DURABLE_WAIT_SECONDS = 10;
    /** The longest X-Gma-Full header, in characters. */
    static final int MAX_FULL_HEADER = 4096;

    private final Settings settings;
    private final String domain;
    private final String pcName;
    private final Routes routes;
    private final LocalQueues local;
    private final Outbound outbound;
    private final Relay relay;
    private final Router router;
    private final BatchCodec codec;
    private final RoomSignal room;
    private final Metrics metrics;
    private final Spooling spooling;
    /** The turns of the batches that senders have in flight at once. */
    private final StreamOrder order = new StreamOrder();
    /** Held while a batch is checked and queued, and by {@link #close}. */
    private final Object accepting = new Object();
    /** KiB of POST bodies being read at once, at most. */
    private final int inboundKib;
    private final Semaphore reading;
    /** Each relayed domain's compressor of poll answers (its methods are synchronized: answers may overlap). */
    private final Map<String, Compression.Compressor> pollCompressors = new HashMap<>();
    /** Guarded by pollCompressors: closed at the stop; answers made after go plain. */
    private boolean compressorsClosed;
    private volatile boolean stopping;
    private volatile boolean closed;
    /**
     * Whether the node queued what its spool held at start ({@link #ready}): until then a POST is answered 503,
     * so that nothing new is queued ahead of the older messages of the same senders.
     */
    private volatile boolean ready;

    Inbound(Settings settings, Routes routes, LocalQueues local, Outbound outbound, Relay relay, Router router,
            BatchCodec codec, RoomSignal room, Metrics metrics, Spooling spooling) {
        this.spooling = spooling;
        this.settings = settings;
        this.domain = settings.domain();
        this.pcName = Name.pcServlet(domain);
        this.routes = routes;
        this.local = local;
        this.outbound = outbound;
        this.relay = relay;
        this.router = router;
        this.codec = codec;
        this.room = room;
        this.metrics = metrics;
        this.inboundKib = (int) Math.max(1, settings.maxTotalBytes() / 1024);
        this.reading = new Semaphore(inboundKib);
    }

    /** Closes the compressors of poll answers; called once the HTTP side is stopped. */
    void closeCompressors() {
        synchronized (pollCompressors) {
            compressorsClosed = true;
            pollCompressors.values().forEach(Compression.Compressor::close);
            pollCompressors.clear();
        }
    }

    /** The compressor of {@code domain}'s poll answers; null once they are closed (answers go plain). */
    private Compression.Compressor pollCompressor(String domain) {
        synchronized (pollCompressors) {
            return compressorsClosed ? null : pollCompressors.computeIfAbsent(domain,
                    d -> new Compression.Compressor());
        }
    }

    /** What the spool held at start is queued: POSTs are taken from now on. */
    void ready() {
        ready = true;
    }

    /** Stopping: POSTs are answered 503 from now on; polls go on (they are how the relay queues drain). */
    void stop() {
        stopping = true;
    }

    /** Closed for good: no POST is between its check and its queueing once this returns. */
    void close() {
        synchronized (accepting) {
            closed = true;
        }
    }

    // ---------------------------------------------------------------- POST

    /**
     * A POST of a batch from domain {@code fromDomain}: accepted whole, or refused whole. The body is read only
     * up to maxBatchBytes. With {@code stream} ({@link Tunnel#STREAM_HEADER}), the batch is taken in its turn
     * among the batches its sender has in flight ({@link StreamOrder}), and answered 409 when its turn does not
     * come.
     */
    Answer accept(String fromDomain, String identity, String contentType, String contentEncoding, long contentLength,
            InputStream body, String stream) throws IOException {
        if (!Name.isDomain(fromDomain)) {
            return Answer.text(400, ErrorCode.MALFORMED, "header " + Tunnel.DOMAIN_HEADER + " \"" + fromDomain
                    + "\" is missing or not " + Name.DOMAIN_RULE);
        }
        StreamOrder.Position position;
        try {
            position = StreamOrder.Position.parse(stream);
        } catch (IllegalArgumentException e) {
            return Answer.text(400, ErrorCode.MALFORMED, e.getMessage());
        }
        List<Message> batch = new ArrayList<>();
        // the KiB its body holds, from its read until it is queued or refused: a batch that waits for its turn
        // holds its memory within maxTotalBytes too
        int[] held = {0};
        try {
            Answer refusal = read(contentType, contentEncoding, contentLength, body, batch, held);
            StreamOrder.Turn turn = null;
            if (position != null) {
                try {
                    turn = order.await(fromDomain, position);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down");
                }
                if (turn == null) {
                    metrics.outOfTurn.increment();
                    return Answer.busy(409, ErrorCode.TIMEOUT, "batch " + position + " of domain " + fromDomain
                            + " is not taken: a batch before it was refused for now, or a newer epoch began, or its"
                            + " turn did not come within " + TimeUnit.NANOSECONDS.toSeconds(StreamOrder.WAIT_NANOS)
                            + " s; post it again in a new epoch", 0);
                }
            }
            Answer answer = null;
            try {
                answer = refusal != null ? refusal : admit(fromDomain, identity, batch, turn, held);
                return answer;
            } finally {
                if (turn != null) {
                    // unless admit ended it once the batch was placed: refused for good (the sender moves on), or
                    // for now (it posts it again, and the batches after it too)
                    turn.endIfOpen(answer != null && isFinal(answer.status()));
                }
            }
        } finally {
            reading.release(held[0]);
        }
    }

    /** Whether a POST answered {@code status} is done with for good: accepted, or refused and never posted again. */
    static boolean isFinal(int status) {
        return status == 200 || status == 400 || status == 401 || status == 403 || status == 413 || status == 415;
    }

    /**
     * Reads and decodes a POST's body into {@code batch}, holding its size of the inbound bytes ({@code held[0]}
     * KiB on return, which the caller gives back once the batch is queued or refused); null, or the answer that
     * refuses it. A zstd body (protocol.md section 6.2) is read whole, then decompressed up to
     * the batch's limit, and no further.
     */
    private Answer read(String contentType, String contentEncoding, long contentLength, InputStream body,
            List<Message> batch, int[] held) throws IOException {
        if (!Tunnel.isBatch(contentType)) {
            return Answer.text(415, ErrorCode.MALFORMED, "Content-Type " + (contentType == null ? "(none)"
                    : "\"" + contentType + "\"") + " is not " + Tunnel.MEDIA_TYPE + ": nothing was read as messages");
        }
        boolean zstd = Compression.isZstd(contentEncoding);
        if (!zstd && !Compression.isPlain(contentEncoding)) {
            return Answer.text(415, ErrorCode.MALFORMED, "Content-Encoding \"" + contentEncoding + "\" is not one"
                    + " this PC servlet reads (" + Compression.ZSTD + ", " + Compression.IDENTITY
                    + "): nothing was read as messages");
        }
        if (stopping) {
            return busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down");
        }
        if (!ready) {
            return busy(503, ErrorCode.INTERNAL, domain + " is starting: it queues what its spool held before it"
                    + " takes new batches");
        }
        long limit = codec.bodyLimit();
        if (contentLength > limit) {
            return Answer.text(413, ErrorCode.TOO_LARGE, "a batch of " + contentLength + " bytes exceeds"
                    + " maxBatchBytes " + settings.maxBatchBytes() + " plus one message (" + limit + " in all)");
        }
        // bodies being read hold memory: together within maxTotalBytes (one alone always fits)
        int kib = (int) Math.min(inboundKib, ((contentLength >= 0 ? contentLength : limit) + 1023) / 1024);
        Answer full = hold(kib);
        if (full != null) {
            return full;
        }
        held[0] = kib;
        long wire;
        try {
            if (zstd) {
                byte[] compressed = body.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
                wire = compressed.length;
                Answer refused = decompressed(compressed, limit, held, batch);
                if (refused != null) {
                    return refused;
                }
            } else {
                if (!codec.read(body, batch)) {
                    return Answer.text(413, ErrorCode.TOO_LARGE, "the batch exceeds maxBatchBytes "
                            + settings.maxBatchBytes() + " plus one message");
                }
                wire = -1;
            }
        } catch (ProtocolException e) {
            // the status follows the code (protocol.md section 6): a message announcing too much is 413
            return Answer.text(e.code() == ErrorCode.TOO_LARGE ? 413 : 400, e.code(), e.getMessage());
        }
        if (batch.isEmpty()) {
            return Answer.text(400, ErrorCode.MALFORMED, "the batch is empty: a POST carries 1..N messages");
        }
        long plain = 0;
        for (Message m : batch) {
            plain += m.encodedLength();
        }
        metrics.received(wire < 0 ? plain : wire, plain, zstd); // the bytes read; the batch counts if taken
        return null;
    }

    /**
     * Decompresses a zstd body into {@code batch}, up to {@code limit} plain bytes; null, or the answer that
     * refuses it. The plain bytes are held in the inbound bytes too ({@code held[0]} KiB in all, on return): as
     * many as the frame says it holds, else the limit.
     */
    private Answer decompressed(byte[] compressed, long limit, int[] held, List<Message> batch)
            throws IOException {
        if (compressed.length > limit) {
            return Answer.text(413, ErrorCode.TOO_LARGE, "a compressed batch of more than " + limit + " bytes exceeds"
                    + " maxBatchBytes " + settings.maxBatchBytes() + " plus one message (" + limit + " in all)");
        }
        long declared = Compression.declaredSize(compressed);
        if (declared > limit) {
            return Answer.text(413, ErrorCode.TOO_LARGE, "a batch that decompresses to " + declared + " bytes"
                    + " exceeds maxBatchBytes " + settings.maxBatchBytes() + " plus one message (" + limit
                    + " in all); nothing was read as messages");
        }
        int more = (int) Math.min(inboundKib - held[0], ((declared >= 0 ? declared : limit) + 1023) / 1024);
        Answer full = hold(more);
        if (full != null) {
            return full;
        }
        held[0] += Math.max(0, more);
        // the first frame's declared size is not the body's when more frames follow: the plain bytes are metered
        try (InputStream plain = new Metered(Compression.decompressing(compressed), Math.max(0, more), held)) {
            if (!codec.read(plain, batch)) {
                batch.clear();
                return Answer.text(413, ErrorCode.TOO_LARGE, "a batch of " + compressed.length + " compressed bytes"
                        + " decompresses to more than maxBatchBytes " + settings.maxBatchBytes() + " plus one message ("
                        + limit + " bytes in all); nothing was taken");
            }
        } catch (ProtocolException e) {
            batch.clear();
            throw e;
        } catch (Metered.NoRoom e) {
            batch.clear();
            metrics.throttledSent.increment();
            return busy(429, ErrorCode.QUEUE_FULL, "a batch of " + compressed.length + " compressed bytes decompresses"
                    + " past the " + e.heldKib + " KiB its frames declared or held, and " + domain + " has no room for"
                    + " more of its " + inboundKib + " KiB for POST bodies being read (maxTotalBytes): other POSTs hold"
                    + " them; nothing was taken");
        } catch (IOException | RuntimeException e) {
            // read from memory: what fails is the body (not zstd, cut short, a bad checksum)
            batch.clear();
            return Answer.text(400, ErrorCode.MALFORMED, "the body is not a valid zstd frame (Content-Encoding "
                    + Compression.ZSTD + "): " + e.getMessage() + "; nothing was read as messages");
        }
        return null;
    }

    /**
     * Sorts a decoded batch by where it goes, then queues all of it or none; ends {@code turn} (when there is
     * one) once that is decided, before waiting for the spool's force, and gives back the {@code held[0]} KiB of
     * inbound bytes its body held once it is queued.
     */
    private Answer admit(String fromDomain, String identity, List<Message> batch, StreamOrder.Turn turn,
            int[] held) {
        Sorted sorted = new Sorted();
        try {
            for (Message m : batch) {
                String spoofed = settings.security().authenticates() ? impostor(fromDomain, m) : null;
                if (spoofed != null) {
                    // not answered: the ERROR would go to the name the sender forged
                    LOG.info("{}: refused {} {} posted by {}: {}", domain, m.command(),
                            Long.toUnsignedString(m.sequence()), fromDomain, spoofed);
                    continue;
                }
                sorted.refuse(m, sort(fromDomain, m, sorted));
            }
        } catch (Routes.RouteException registryDown) {
            // whether a domain is relayed here cannot be told now: the sender keeps the batch and tries again
            return busy(503, ErrorCode.INTERNAL, registryDown.getMessage());
        }
        // a queue is often full for a moment only (its endpoint is reading): wait a little before pushing back
        Placement placed;
        try {
            placed = room.await(() -> admitted(sorted, identity), p -> !(p instanceof Placement.NoRoom),
                    System.nanoTime() + ADMIT_WAIT_NANOS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down");
        }
        if (turn != null) {
            turn.endIfOpen(!(placed instanceof Placement.Closed) && !(placed instanceof Placement.NoRoom));
        }
        if (placed instanceof Placement.Closed) {
            return busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down");
        }
        if (placed instanceof Placement.NoRoom full) {
            metrics.throttledSent.increment();
            Answer busy = busy(429, ErrorCode.QUEUE_FULL, domain + " has no room for the whole batch of "
                    + batch.size() + " messages now: " + full.why());
            // when only endpoints' queues lack room, say which: the sender may post the others meanwhile
            Set<String> endpoints = relayFits(sorted.relayed) == null && outbound.fits(sorted.onward) == null
                    ? local.fullFor(sorted.local) : Set.of();
            return endpoints.isEmpty() ? busy : busy.withFull(fullHeader(endpoints));
        }
        // queued: its memory is the queues' from now on, not the POST bodies being read
        reading.release(held[0]);
        held[0] = 0;
        metrics.delivered.add(sorted.local.size());
        sorted.relayed.values().forEach(ms -> metrics.relayed.add(ms.size()));
        sorted.onward.values().forEach(ms -> metrics.relayed.add(ms.size()));
        if (!durable(sorted)) {
            // queued, but not known to be on disk: the sender keeps the batch and posts it again (a duplicate
            // of what gets through is dropped where it is delivered)
            return busy(503, ErrorCode.INTERNAL, domain + " could not write the batch to its spool within "
                    + DURABLE_WAIT_SECONDS + " s");
        }
        metrics.batchesReceived.increment();
        metrics.messagesReceived.add(batch.size());
        return new Answer(200, Tunnel.MEDIA_TYPE, BatchCodec.encodeAll(sorted.errors), 0, null);
    }

    /**
     * Why {@code m}, posted as domain {@code fromDomain}, may not be taken: its sender names a domain that is
     * neither the poster's nor one the poster relays for (outbound-only via it); null when it may.
     */
    private String impostor(String fromDomain, Message m) throws Routes.RouteException {
        String sender = Name.domainOf(m.from());
        if (sender.equals(fromDomain)) {
            return null;
        }
        if (Name.isDomain(sender)) {
            try {
                if (fromDomain.equals(routes.domain(sender).via())) {
                    return null;
                }
            } catch (Routes.RouteException e) {
                if (e.code != ErrorCode.NO_ROUTE) {
                    throw e;
                }
            }
        }
        return "\"" + m.from() + "\" is not of domain " + fromDomain + " nor of a domain it relays for";
    }

    /**
     * A batch sorted by where each message goes, and the ERRORs for those that go nowhere; once spooled, the
     * number of the last record appended, which must be durable before the batch is acknowledged.
     */
    private static final class Sorted {
        List<Queued> local = new ArrayList<>();
        Map<String, List<Queued>> relayed = new HashMap<>();
        Map<String, List<Queued>> onward = new HashMap<>();
        final List<Message> errors = new ArrayList<>();
        long firstSeq = Spooling.NONE;
        long lastSeq = Spooling.NONE;

        /** With a refusal, adds the ERROR that answers {@code m} (none for an answer). */
        void refuse(Message m, ErrorText refusal) {
            if (refusal != null && m.command() != Command.REPLY && m.command() != Command.ERROR) {
                errors.add(Message.error(m.to(), m.from(), m.sequence(), refusal.code(),
                        Router.sentence(refusal.sentence())));
            }
        }
    }

    /** Puts {@code m} in the list it goes to and returns null; or returns why it cannot go anywhere. */
    private ErrorText sort(String fromDomain, Message m, Sorted into) throws Routes.RouteException {
        if (m.command().isStreamOnly()) {
            return new ErrorText(ErrorCode.MALFORMED, m.command() + " belongs to a TCP stream, not to the HTTP tunnel");
        }
        if (Name.inDomain(m.to(), domain)) {
            if (m.to().equals(pcName)) {
                return new ErrorText(ErrorCode.NO_ROUTE, pcName + " takes no messages of its own");
            }
            try {
                if (!routes.endpointExists(m.to())) {
                    return new ErrorText(ErrorCode.NO_ROUTE, m.to() + " is not registered");
                }
            } catch (Routes.RouteException registryDown) {
                // cannot tell now: hold it; the janitor fails it later if the endpoint is gone
            }
            into.local.add(Queued.inMemory(m));
            return null;
        }
        String d = Name.domainOf(m.to());
        if (routes.relaysFor(d)) {
            into.relayed.computeIfAbsent(d, k -> new ArrayList<>()).add(Queued.inMemory(m));
        } else if (routes.relaysFor(fromDomain) && Name.isDomain(d)) {
            into.onward.computeIfAbsent(d, k -> new ArrayList<>()).add(Queued.inMemory(m));
        } else {
            return new ErrorText(ErrorCode.NO_ROUTE, "domain " + d + " is not served by " + domain
                    + "'s PC servlet");
        }
        return null;
    }

    /**
     * Queues the whole batch if every part of it has room, in the queues and in the spool, else nothing. Spooled,
     * its messages are appended first, with the identity the poster proved to be.
     */
    private Placement admitted(Sorted sorted, String identity) {
        synchronized (accepting) {
            if (stopping) {
                return new Placement.Closed(domain + " is shutting down");
            }
            String full = relayFits(sorted.relayed);
            if (full == null) {
                full = outbound.fits(sorted.onward);
            }
            if (full != null) {
                return new Placement.NoRoom(full);
            }
            Placement.NoRoom lacking = local.lacking(sorted.local);
            if (lacking != null) {
                return lacking;
            }
            if (spooling.on()) {
                String noSpool = spool(sorted, identity);
                if (noSpool != null) {
                    return new Placement.NoRoom(noSpool);
                }
            }
            if (!sorted.local.isEmpty()) {
                Placement delivered = local.deliverAll(sorted.local, router, true);
                if (!delivered.placed()) {
                    return delivered;
                }
            }
            sorted.relayed.forEach(relay::addAll);
            sorted.onward.forEach(router::forceAll);
            return Placement.PLACED;
        }
    }

    /**
     * Appends every message of the batch to the spool, all or none, numbering them in {@code sorted}; null, or why
     * not (the spool is full).
     */
    private String spool(Sorted sorted, String identity) {
        int count = sorted.local.size();
        for (List<Queued> ms : sorted.relayed.values()) {
            count += ms.size();
        }
        for (List<Queued> ms : sorted.onward.values()) {
            count += ms.size();
        }
        if (count == 0) {
            return null;
        }
        Spooling.Lane[] lanes = new Spooling.Lane[count];
        Message[] messages = new Message[count];
        int n = gather(sorted.local, Spooling.Lane.LOCAL, lanes, messages, 0);
        for (List<Queued> ms : sorted.relayed.values()) {
            n = gather(ms, Spooling.Lane.RELAY, lanes, messages, n);
        }
        for (List<Queued> ms : sorted.onward.values()) {
            n = gather(ms, Spooling.Lane.OUTBOUND, lanes, messages, n);
        }
        long first;
        try {
            first = spooling.appendAll(lanes, messages, count, identity);
        } catch (SpoolException e) {
            return e.getMessage();
        }
        // numbered in the order gathered
        long next = first;
        sorted.local = numbered(sorted.local, next);
        next += sorted.local.size();
        for (Map.Entry<String, List<Queued>> e : sorted.relayed.entrySet()) {
            e.setValue(numbered(e.getValue(), next));
            next += e.getValue().size();
        }
        for (Map.Entry<String, List<Queued>> e : sorted.onward.entrySet()) {
            e.setValue(numbered(e.getValue(), next));
            next += e.getValue().size();
        }
        sorted.firstSeq = first;
        sorted.lastSeq = next - 1;
        return null;
    }

    private static int gather(List<Queued> from, Spooling.Lane lane, Spooling.Lane[] lanes, Message[] into, int at) {
        for (Queued q : from) {
            lanes[at] = lane;
            into[at++] = q.message();
        }
        return at;
    }

    /** The messages as spooled, with the record numbers from {@code first} on. */
    private static List<Queued> numbered(List<Queued> messages, long first) {
        List<Queued> spooled = new ArrayList<>(messages.size());
        long seq = first;
        for (Queued q : messages) {
            spooled.add(new Queued(q.message(), seq++));
        }
        return spooled;
    }

    /**
     * Waits until what a batch appended is safe (on disk, or taken by its endpoints), before it is acknowledged;
     * whether it is within {@link #DURABLE_WAIT_SECONDS}.
     */
    private boolean durable(Sorted sorted) {
        return durable(sorted.firstSeq, sorted.lastSeq);
    }

    /** Waits until the records from {@code first} to {@code last} are safe; whether they are. */
    private boolean durable(long first, long last) {
        try {
            return spooling.awaitSafe(first, last, DURABLE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Null when every share fits its relay queue, else which one does not. */
    private String relayFits(Map<String, List<Queued>> wanted) {
        for (Map.Entry<String, List<Queued>> e : wanted.entrySet()) {
            String full = Outbound.fits(relay.queue(e.getKey()), e.getValue());
            if (full != null) {
                return full;
            }
        }
        return null;
    }

    /**
     * The X-Gma-Full header: the full endpoints' names, as many as fit in MAX_FULL_HEADER characters (a
     * header must stay small; holding back some of them still lets the others through).
     */
    static String fullHeader(Set<String> endpoints) {
        StringBuilder b = new StringBuilder();
        for (String e : endpoints) {
            if (b.length() + 1 + e.length() > MAX_FULL_HEADER) {
                break;
            }
            b.append(b.length() == 0 ? "" : " ").append(e);
        }
        return b.toString();
    }

    // ---------------------------------------------------------------- polls

    /**
     * A batch polled from the via domain: queued whole for this domain's endpoints, or not at all; what has
     * no endpoint here gets its ERROR once the rest is queued.
     *
     * @return false when nothing was queued, for want of room: the batch is to be polled again
     */
    boolean admitPolled(List<Message> batch) {
        Sorted sorted = new Sorted();
        try {
            for (Message m : batch) {
                sorted.refuse(m, sort(settings.via(), m, sorted));
            }
        } catch (Routes.RouteException registryDown) {
            LOG.debug("{}: a polled batch waits: {}", domain, registryDown.getMessage());
            return false; // polled again, without the ack
        }
        // an outbound-only domain relays for nobody: what would go on from here has no route
        ErrorText noRelay = new ErrorText(ErrorCode.NO_ROUTE, domain + " is outbound-only and relays for no domain");
        sorted.relayed.values().forEach(ms -> ms.forEach(q -> sorted.refuse(q.message(), noRelay)));
        sorted.onward.values().forEach(ms -> ms.forEach(q -> sorted.refuse(q.message(), noRelay)));
        sorted.relayed = Map.of();
        sorted.onward = Map.of();
        if (!sorted.local.isEmpty() && !admitted(sorted, settings.via()).placed()) {
            metrics.throttledReceived.increment();
            return false;
        }
        // the refused messages' senders are told before the next poll acknowledges the batch, and that waits until
        // the ERRORs are safe too: a crash before then polls the batch again, rather than losing both
        long firstError = Long.MAX_VALUE;
        long lastError = Spooling.NONE;
        for (Message e : sorted.errors) {
            long seq = router.routeOwn(e);
            if (seq != Spooling.NONE) {
                firstError = Math.min(firstError, seq);
                lastError = Math.max(lastError, seq);
            }
        }
        if (!durable(sorted) || lastError != Spooling.NONE && !durable(firstError, lastError)) {
            return false; // polled again, without the ack: a duplicate is dropped where it is delivered
        }
        metrics.batchesReceived.increment();
        metrics.messagesReceived.add(batch.size());
        metrics.delivered.add(sorted.local.size());
        return true;
    }

    /**
     * A long poll from an outbound-only domain that registered with this one as its via; its batch goes
     * compressed when the poll said it reads zstd ({@code acceptEncoding}), compression is on, and it pays.
     *
     * <p>No thread waits for the batch ({@link Relay#poll}): {@code reply} is given the answer once, at once or
     * when a batch comes or the wait is over, as a supplier that makes it (encoded, maybe compressed) on the
     * thread that writes it.
     */
    void poll(String from, String waitParam, String ackParam, String maxParam, String acceptEncoding,
            Consumer<Supplier<Answer>> reply) {
        Ask ask = ask(from, waitParam, ackParam, maxParam);
        if (ask.refused() != null) {
            reply.accept(ask::refused);
            return;
        }
        // polls go on while stopping: they are how the relay queues drain
        String tooMany = relay.poll(from, ask.ack(), TimeUnit.SECONDS.toNanos(ask.waitSeconds()), ask.maxBytes(),
                batch -> reply.accept(() -> batchAnswer(from, batch, acceptEncoding)));
        if (tooMany != null) {
            reply.accept(() -> busy(503, ErrorCode.QUEUE_FULL, tooMany));
        }
    }

    /** A poll's parameters, or why it is refused before it reaches the relay. */
    private record Ask(long waitSeconds, long ack, long maxBytes, Answer refused) {
        static Ask refused(Answer why) {
            return new Ask(0, 0, 0, why);
        }
    }

    private Ask ask(String from, String waitParam, String ackParam, String maxParam) {
        if (!Name.isDomain(from)) {
            return Ask.refused(Answer.text(400, ErrorCode.MALFORMED, "parameter domain \"" + from + "\" is missing"
                    + " or not " + Name.DOMAIN_RULE));
        }
        long wait;
        long ack;
        long max;
        try {
            wait = waitParam == null ? 30 : Long.parseLong(waitParam);
            ack = ackParam == null || ackParam.isEmpty() ? Long.MIN_VALUE : Long.parseLong(ackParam);
            max = maxParam == null ? Long.MAX_VALUE : Long.parseLong(maxParam);
        } catch (NumberFormatException e) {
            return Ask.refused(Answer.text(400, ErrorCode.MALFORMED, "wait \"" + waitParam + "\", ack \"" + ackParam
                    + "\" and max \"" + maxParam + "\" must be whole numbers"));
        }
        if (wait < 0 || wait > 60) {
            return Ask.refused(Answer.text(400, ErrorCode.MALFORMED, "wait " + wait + " is outside 0..60 seconds"));
        }
        if (max < Relay.MIN_POLL_BYTES) {
            return Ask.refused(Answer.text(400, ErrorCode.MALFORMED, "max " + max + " is under "
                    + Relay.MIN_POLL_BYTES + " bytes, the least batch a poll may ask for"));
        }
        boolean relayed;
        try {
            relayed = routes.relaysFor(from);
        } catch (Routes.RouteException registryDown) {
            return Ask.refused(busy(503, ErrorCode.INTERNAL, registryDown.getMessage()));
        }
        if (!relayed) {
            return Ask.refused(Answer.text(403, ErrorCode.FORBIDDEN, "domain " + from + " is not registered with"
                    + " via " + domain));
        }
        if (closed) {
            return Ask.refused(busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down"));
        }
        return new Ask(wait, ack, max, null);
    }

    /** A poll's answer: 204 without a batch, else 200 with it (compressed when that pays). */
    private Answer batchAnswer(String from, Relay.Batch batch, String acceptEncoding) {
        if (batch == null) {
            return new Answer(204, null, new byte[0], 0, null);
        }
        metrics.batchesSent.increment();
        metrics.messagesSent.add(batch.messages().size());
        byte[] plain = BatchCodec.encodeAll(batch.messages().stream().map(Queued::message).toList());
        Answer answer = new Answer(200, Tunnel.MEDIA_TYPE, plain, 0, Long.toString(batch.id()));
        if (settings.compression() == Compression.Mode.AUTO && Compression.accepts(acceptEncoding)) {
            Compression.Compressor compressor = pollCompressor(from);
            long start = System.nanoTime();
            byte[] zstd = compressor != null && compressor.tries(plain.length) ? compressor.compress(plain,
                    plain.length) : null;
            metrics.compressNanos.add(System.nanoTime() - start);
            if (zstd != null) {
                metrics.sent(zstd.length, plain.length, true);
                return answer.withBody(zstd, Compression.ZSTD);
            }
            metrics.uncompressedSent.increment();
        }
        metrics.sent(plain.length, plain.length, false);
        return answer;
    }

    /**
     * Holds {@code kib} more KiB of the bodies being read, which together stay within maxTotalBytes: null, or the
     * answer when they do not come free within {@link #ADMIT_WAIT_NANOS}.
     */
    private Answer hold(int kib) {
        try {
            if (kib > 0 && !reading.tryAcquire(kib, ADMIT_WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                metrics.throttledSent.increment();
                int free = reading.availablePermits();
                return busy(429, ErrorCode.QUEUE_FULL, domain + " has " + free + " KiB of its " + inboundKib
                        + " KiB for POST bodies being read (maxTotalBytes) free, and this POST needs " + kib
                        + " KiB: other POSTs hold the rest");
            }
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return busy(503, ErrorCode.SHUTTING_DOWN, domain + " is shutting down");
        }
    }

    /**
     * The plain bytes of a compressed body as the decoder takes them: past the KiB held for them, more are held
     * (at least 64 KiB at a time, as many as the whole bound has left), or the read fails with {@link NoRoom}.
     * One POST that holds the whole bound may go on to its limit, as one alone always may.
     */
    private final class Metered extends FilterInputStream {
        private static final int STEP_KIB = 64;
        private final int[] held;
        private long plainKib;
        private long bytes;

        /** No room to hold more of the plain bytes. */
        static final class NoRoom extends IOException {
            final long heldKib;

            NoRoom(long heldKib) {
                super("no room for more plain bytes past " + heldKib + " KiB");
                this.heldKib = heldKib;
            }
        }

        Metered(InputStream in, int plainKib, int[] held) {
            super(in);
            this.plainKib = plainKib;
            this.held = held;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                took(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                took(n);
            }
            return n;
        }

        private void took(int n) throws NoRoom {
            bytes += n;
            long need = (bytes + 1023) / 1024 - plainKib;
            if (need <= 0) {
                return;
            }
            int more = (int) Math.min(inboundKib - held[0], Math.max(need, STEP_KIB));
            if (more <= 0) {
                return; // it holds the whole bound: it goes on alone, to its limit
            }
            if (!reading.tryAcquire(more)) {
                throw new NoRoom(plainKib);
            }
            held[0] += more;
            plainKib += more;
        }
    }

    private Answer busy(int status, ErrorCode code, String sentence) {
        return Answer.busy(status, code, sentence, settings.retryAfter().toSeconds());
    }
}
