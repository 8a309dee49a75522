package io.gma.pcservlet;

import io.gma.client.Gateway;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PC servlet's engine, under both the embedded {@link PcServlet} and a {@link TunnelServlet} deployed in a
 * container. It routes by the part of a name after {@code @} (PROTOCOL.md sections 3 and 6):
 *
 * <pre>
 *   from an uplink (Gateway)          to domain D          -&gt; D's DomainQueue -&gt; Forwarder -&gt; POST to D
 *   from a POST or a poll (inbound)   to this domain       -&gt; the endpoint's queue in the Gateway
 *                                     to a domain we relay -&gt; its queue in the Relay, taken by its polls
 *                                     from a domain we relay, to another -&gt; that domain's DomainQueue
 * </pre>
 *
 * Every queue is bounded. What an uplink sends into a full queue pauses the uplinks; a POST that does not fit
 * whole is answered 429; so a slow consumer slows its producers, hop by hop, and memory stays bounded.
 */
final class PcCore implements Gateway.Router, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PcCore.class);
    static final String MESSAGES_PATH = "/gma/v1/messages";
    static final String DOMAIN_HEADER = "X-Gma-Domain";
    static final String BATCH_HEADER = "X-Gma-Batch";
    /** On a 429: the endpoints whose queues are full (an addition to PROTOCOL.md section 6). */
    static final String FULL_HEADER = "X-Gma-Full";
    static final String VERSION = "0.1.0";
    static final WireCodec CODEC = WireCodec.standard();
    private static final long JANITOR_SECONDS = 5;
    /** How long a POST may wait for room before it is answered 429. */
    static final long ADMIT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Destination domains with a queue at once, at most: local endpoints cannot make threads without end. */
    static final int MAX_DOMAINS = 1024;
    /** The longest X-Gma-Full header, in characters. */
    static final int MAX_FULL_HEADER = 4096;
    /** The longest sentence of an ERROR this PC servlet makes, in characters. */
    static final int MAX_SENTENCE = 1000;
    /** The largest message the codec takes, encoded: header, two names, data. */
    static final long MAX_ENCODED_MESSAGE = 20 + 255 + 255 + WireCodec.DEFAULT_MAX_MESSAGE_BYTES;

    /**
     * What to answer an HTTP request: a status, a body and its type, Retry-After seconds (0: none), the
     * X-Gma-Batch id of a poll's batch and the X-Gma-Full endpoints of a 429 (null: none).
     */
    record Answer(int status, String contentType, byte[] body, long retryAfterSeconds, String batchId,
            String full) {
        Answer(int status, String contentType, byte[] body, long retryAfterSeconds, String batchId) {
            this(status, contentType, body, retryAfterSeconds, batchId, null);
        }

        static Answer text(int status, ErrorCode code, String sentence) {
            return new Answer(status, "text/plain; charset=utf-8", new ErrorText(code, sentence).toBytes(), 0,
                    null);
        }
    }

    private final Settings settings;
    private final RegistryClient registry;
    private final Routes routes;
    private final Metrics metrics = new Metrics();
    private final OkHttpClient http;
    private final Gateway gateway;
    private final AtomicLong totalBytes = new AtomicLong();
    private final Map<String, DomainQueue> outbound = new ConcurrentHashMap<>();
    private final Map<DomainQueue, Thread> forwarders = new ConcurrentHashMap<>();
    private final Relay relay;
    private final Object accepting = new Object();
    /** KiB of POST bodies being read at once, at most. */
    private final int inboundKib;
    private final Semaphore inbound;
    private final ScheduledExecutorService timer;
    private Thread poller;
    private volatile String url;
    private volatile boolean stopping;
    private volatile boolean closed;

    PcCore(Settings settings) throws IOException {
        this.settings = settings;
        Security security = settings.security();
        String warning = security.warning("PC servlet of " + settings.domain());
        if (warning != null) {
            LOG.warn(warning);
        }
        this.registry = RegistryClient.builder(settings.registry()).security(security).build();
        this.routes = new Routes(settings.domain(), settings.via(), registry);
        Dispatcher dispatcher = new Dispatcher();
        dispatcher.setMaxRequestsPerHost(4);
        this.http = HttpClients.configure(new OkHttpClient.Builder(), security).dispatcher(dispatcher)
                .connectionPool(new ConnectionPool(8, 1, TimeUnit.MINUTES))
                .connectTimeout(Duration.ofSeconds(5)).readTimeout(Duration.ofSeconds(90))
                .writeTimeout(Duration.ofSeconds(30)).build();
        this.relay = new Relay(settings, totalBytes, this::roomFreed);
        this.inboundKib = (int) Math.max(1, settings.maxTotalBytes() / 1024);
        this.inbound = new Semaphore(inboundKib);
        this.gateway = Gateway.builder(settings.domain(), this).host(settings.host()).port(settings.uplinkPort())
                .maxQueuedBytes(settings.maxEndpointBytes()).maxParkedBytes(settings.maxTotalBytes())
                .security(security).registry(registry).build();
        this.timer = Executors.newSingleThreadScheduledExecutor(
                Threads.named("gma-pc-" + settings.domain() + "-timer"));
    }

    /**
     * Starts serving as {@code url} (null for an outbound-only domain): registers the domain and keeps its
     * lease, accepts uplinks, and polls the via domain if there is one.
     *
     * @throws RegistryException if the registry refuses the domain (taken by another identity: 409)
     */
    void start(String publicUrl) throws RegistryException {
        this.url = publicUrl;
        registerDomain();
        gateway.start();
        long renew = Math.max(1, settings.lease().toMillis() / 3);
        timer.scheduleWithFixedDelay(this::renewDomain, renew, renew, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::dropVanished, JANITOR_SECONDS, JANITOR_SECONDS, TimeUnit.SECONDS);
        if (settings.via() != null) {
            poller = Threads.start("gma-pc-" + settings.domain() + "-poll-" + settings.via(), new Poller(this));
        }
        LOG.info("PC servlet of {} at {}, uplinks at {}", settings.domain(),
                publicUrl != null ? publicUrl : "no URL (outbound-only, via " + settings.via() + ")",
                gateway.address());
    }

    private void registerDomain() throws RegistryException {
        registry.registerDomain(settings.domain(), settings.via() == null ? url : null, settings.via(),
                settings.lease());
    }

    private void renewDomain() {
        try {
            registerDomain();
        } catch (RegistryException e) {
            LOG.warn("{}: renewing the domain's registration failed, will retry: {}", settings.domain(),
                    e.getMessage());
        }
    }

    /** Endpoints with messages waiting and no uplink, that the registry no longer knows: their messages fail. */
    private void dropVanished() {
        for (Gateway.QueueInfo q : gateway.queues()) {
            if (q.connected()) {
                continue;
            }
            try {
                if (!routes.endpointExists(q.endpoint())) {
                    gateway.drop(q.endpoint(), ErrorCode.NO_ROUTE, q.endpoint() + " is not registered any more");
                }
            } catch (Routes.RouteException e) {
                LOG.debug("{}: cannot check {}: {}", settings.domain(), q.endpoint(), e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- from the uplinks

    @Override
    public boolean route(Message m) {
        String d = Name.domainOf(m.to());
        if (d.equals(settings.domain())) {
            // an endpoint sent to its own domain through us: deliver it (or park it until there is room)
            if (m.to().equals(gateway.name())) {
                answer(m, ErrorCode.NO_ROUTE, gateway.name() + " takes no messages of its own");
                return true;
            }
            return gateway.deliverAll(List.of(m)) == null;
        }
        if (!Name.isDomain(d)) {
            answer(m, ErrorCode.NO_ROUTE, "\"" + m.to() + "\" names no domain");
            return true;
        }
        return enqueue(d, m, false);
    }

    @Override
    public void undeliverable(Message m, ErrorCode code, String reason) {
        metrics.drops.increment();
        answer(m, code, reason);
    }

    /**
     * Queues a message for domain {@code d}: if it fits, or whatever the bounds with {@code force}. A domain
     * beyond MAX_DOMAINS gets NO_ROUTE (and the message counts as taken).
     *
     * @return whether it was taken
     */
    private boolean enqueue(String d, Message m, boolean force) {
        while (true) {
            if (closed) {
                metrics.drops.increment(); // stopped: the queues were drained and counted already
                return true;
            }
            DomainQueue q = outbound(d);
            if (q == null) {
                answer(m, ErrorCode.NO_ROUTE, settings.domain() + " already sends to " + MAX_DOMAINS
                        + " domains, the most it may: none for domain " + d);
                return true;
            }
            Boolean taken = q.offer(m, force);
            if (taken != null) {
                return taken;
            }
            outbound.remove(d, q); // retired (or drained) meanwhile: a new queue takes over
        }
    }

    /** The queue for domain {@code d}, made with its forwarder if need be; null past MAX_DOMAINS. */
    private DomainQueue outbound(String d) {
        DomainQueue q = outbound.get(d);
        if (q != null || outbound.size() >= MAX_DOMAINS) {
            return q;
        }
        return outbound.computeIfAbsent(d, k -> {
            DomainQueue created = new DomainQueue(k, settings.maxQueuedBytes(), settings.maxQueuedMessages(),
                    totalBytes, settings.maxTotalBytes());
            Thread t = Threads.daemon("gma-pc-" + settings.domain() + "-to-" + k, new Forwarder(this, created, http));
            forwarders.put(created, t);
            t.start();
            return created;
        });
    }

    /** A forwarder's queue went idle and was retired: both go, until the domain has traffic again. */
    void retired(DomainQueue q) {
        outbound.remove(q.domain, q);
        forwarders.remove(q);
    }

    /** Room was freed in some queue: paused uplinks read again (and pause again if theirs is still full). */
    void roomFreed() {
        if (!stopping) {
            gateway.resume();
        }
    }

    // ---------------------------------------------------------------- errors and own messages

    /** Tells the sender of {@code m} it failed: ERROR from its destination, with its sequence number. */
    void answer(Message m, ErrorCode code, String reason) {
        if (m.command() == Command.REPLY || m.command() == Command.ERROR) {
            LOG.debug("{}: {} from {} to {} lost: {} {}", settings.domain(), m.command(), m.from(), m.to(), code,
                    reason);
            return; // an answer to an answer would go round; the requester's timeout covers it
        }
        routeOwn(Message.error(m.to(), m.from(), m.sequence(), code, sentence(reason)));
    }

    /** An ERROR's sentence, at most MAX_SENTENCE characters, so that an answer's size is bounded. */
    static String sentence(String text) {
        return text.length() <= MAX_SENTENCE ? text : text.substring(0, MAX_SENTENCE - 3) + "...";
    }

    /** Routes an ERROR (made here, or from a POST's answer) whatever the bounds: they are few and small. */
    void routeOwn(Message e) {
        if (closed) {
            return;
        }
        String d = Name.domainOf(e.to());
        if (d.equals(settings.domain())) {
            if (!e.to().equals(gateway.name()) && gateway.deliverAll(List.of(e)) != null) {
                LOG.debug("{}: could not deliver {} to {}", settings.domain(), e.command(), e.to());
            }
        } else if (Name.isDomain(d)) {
            enqueue(d, e, true);
        }
    }

    // ---------------------------------------------------------------- inbound: POST

    /**
     * A POST of a batch from domain {@code fromDomain}: accepted whole, or refused whole (PROTOCOL.md section
     * 6). The body is read only up to maxBatchBytes.
     */
    Answer accept(String fromDomain, long contentLength, InputStream body) throws IOException {
        if (!Name.isDomain(fromDomain)) {
            return Answer.text(400, ErrorCode.MALFORMED, "header " + DOMAIN_HEADER + " \"" + fromDomain
                    + "\" is missing or not " + Name.DOMAIN_RULE);
        }
        if (stopping) {
            return busy(503, ErrorCode.SHUTTING_DOWN, settings.domain() + " is shutting down");
        }
        long limit = bodyLimit();
        if (contentLength > limit) {
            return Answer.text(413, ErrorCode.TOO_LARGE, "a batch of " + contentLength + " bytes exceeds"
                    + " maxBatchBytes " + settings.maxBatchBytes() + " plus one message (" + limit + " in all)");
        }
        // bodies being read hold memory: together within maxTotalBytes (one alone always fits)
        int kib = (int) Math.min(inboundKib, ((contentLength >= 0 ? contentLength : limit) + 1023) / 1024);
        try {
            if (!inbound.tryAcquire(kib, ADMIT_WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                metrics.throttledSent.increment();
                return busy(429, ErrorCode.QUEUE_FULL, settings.domain() + " is reading " + inboundKib
                        + " KiB of other POSTs already");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return busy(503, ErrorCode.SHUTTING_DOWN, settings.domain() + " is shutting down");
        }
        try {
            List<Message> batch = new ArrayList<>();
            try {
                if (!read(body, batch)) {
                    return Answer.text(413, ErrorCode.TOO_LARGE, "the batch exceeds maxBatchBytes "
                            + settings.maxBatchBytes() + " plus one message");
                }
            } catch (ProtocolException e) {
                return Answer.text(400, e.code(), e.getMessage());
            }
            if (batch.isEmpty()) {
                return Answer.text(400, ErrorCode.MALFORMED, "the batch is empty: a POST carries 1..N messages");
            }
            metrics.batchesReceived.increment();
            metrics.messagesReceived.add(batch.size());
            return admit(fromDomain, batch);
        } finally {
            inbound.release(kib);
        }
    }

    /** The largest body: maxBatchBytes, plus the one message that may start before that limit and end after. */
    private long bodyLimit() {
        return settings.maxBatchBytes() + MAX_ENCODED_MESSAGE;
    }

    /**
     * Decodes the body into {@code batch}; false when a message starts past maxBatchBytes or the body passes
     * {@link #bodyLimit()} (reading stops there).
     */
    private boolean read(InputStream body, List<Message> batch) throws IOException {
        StreamDecoder decoder = CODEC.newStreamDecoder();
        byte[] chunk = new byte[64 * 1024];
        long[] started = {0}; // where the next message starts
        boolean[] over = {false};
        long total = 0;
        for (int n; (n = body.read(chunk)) > 0 && !over[0];) {
            total += n;
            if (total > bodyLimit()) {
                return false;
            }
            decoder.feed(chunk, 0, n, m -> {
                over[0] |= started[0] >= settings.maxBatchBytes();
                started[0] += m.encodedLength();
                batch.add(m);
            });
        }
        if (over[0]) {
            return false;
        }
        decoder.finish();
        return true;
    }

    /** Sorts a decoded batch by where it goes, then queues all of it or none. */
    private Answer admit(String fromDomain, List<Message> batch) {
        List<Message> local = new ArrayList<>();
        Map<String, List<Message>> relayed = new HashMap<>();
        Map<String, List<Message>> onward = new HashMap<>();
        List<Message> errors = new ArrayList<>();
        try {
            for (Message m : batch) {
                String spoofed = security().authenticates() ? impostor(fromDomain, m) : null;
                if (spoofed != null) {
                    // not answered: the ERROR would go to the name the sender forged
                    LOG.info("{}: refused {} {} posted by {}: {}", settings.domain(), m.command(),
                            Long.toUnsignedString(m.sequence()), fromDomain, spoofed);
                    continue;
                }
                refuse(m, sort(fromDomain, m, local, relayed, onward), errors);
            }
        } catch (Routes.RouteException registryDown) {
            // whether a domain is relayed here cannot be told now: the sender keeps the batch and tries again
            return busy(503, ErrorCode.INTERNAL, registryDown.getMessage());
        }
        // a queue is often full for a moment only (its endpoint is reading): wait a little before pushing back
        long deadline = System.nanoTime() + ADMIT_WAIT_NANOS;
        for (String full; (full = admitted(local, relayed, onward)) != null;) {
            if (stopping) {
                return busy(503, ErrorCode.SHUTTING_DOWN, settings.domain() + " is shutting down");
            }
            if (System.nanoTime() > deadline) {
                metrics.throttledSent.increment();
                Answer busy = busy(429, ErrorCode.QUEUE_FULL, settings.domain() + " has no room for the whole batch"
                        + " of " + batch.size() + " messages now: " + full);
                // when only endpoints' queues lack room, say which: the sender may post the others meanwhile
                java.util.Set<String> endpoints = fits(relayed, true) == null && fits(onward, false) == null
                        ? gateway.fullFor(local) : java.util.Set.of();
                return endpoints.isEmpty() ? busy : new Answer(busy.status(), busy.contentType(), busy.body(),
                        busy.retryAfterSeconds(), null, fullHeader(endpoints));
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return busy(503, ErrorCode.SHUTTING_DOWN, settings.domain() + " is shutting down");
            }
        }
        metrics.delivered.add(local.size());
        relayed.values().forEach(ms -> metrics.relayed.add(ms.size()));
        onward.values().forEach(ms -> metrics.relayed.add(ms.size()));
        return new Answer(200, "application/x-gma", encodeAll(errors), 0, null);
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

    /** With a refusal, adds the ERROR that answers {@code m} (none for an answer). */
    private static void refuse(Message m, ErrorText refusal, List<Message> errors) {
        if (refusal != null && m.command() != Command.REPLY && m.command() != Command.ERROR) {
            errors.add(Message.error(m.to(), m.from(), m.sequence(), refusal.code(), sentence(refusal.sentence())));
        }
    }

    /**
     * A batch polled from the via domain: queued whole for this domain's endpoints, or not at all; what has
     * no endpoint here gets its ERROR once the rest is queued.
     *
     * @return false when nothing was queued, for want of room: the batch is to be polled again
     */
    boolean admitPolled(List<Message> batch) {
        List<Message> local = new ArrayList<>();
        List<Message> errors = new ArrayList<>();
        Map<String, List<Message>> relayed = new HashMap<>();
        Map<String, List<Message>> onward = new HashMap<>();
        try {
            for (Message m : batch) {
                refuse(m, sort(settings.via(), m, local, relayed, onward), errors);
            }
        } catch (Routes.RouteException registryDown) {
            LOG.debug("{}: a polled batch waits: {}", settings.domain(), registryDown.getMessage());
            return false; // polled again, without the ack
        }
        // an outbound-only domain relays for nobody: what would go on from here has no route
        ErrorText noRelay = new ErrorText(ErrorCode.NO_ROUTE, settings.domain()
                + " is outbound-only and relays for no domain");
        relayed.values().forEach(ms -> ms.forEach(m -> refuse(m, noRelay, errors)));
        onward.values().forEach(ms -> ms.forEach(m -> refuse(m, noRelay, errors)));
        if (!local.isEmpty() && gateway.deliverAll(local) != null) {
            metrics.throttledReceived.increment();
            return false;
        }
        errors.forEach(this::routeOwn);
        metrics.batchesReceived.increment();
        metrics.messagesReceived.add(batch.size());
        metrics.delivered.add(local.size());
        return true;
    }

    /**
     * The X-Gma-Full header: the full endpoints' names, as many as fit in MAX_FULL_HEADER characters (a
     * header must stay small; holding back some of them still lets the others through).
     */
    static String fullHeader(java.util.Set<String> endpoints) {
        StringBuilder b = new StringBuilder();
        for (String e : endpoints) {
            if (b.length() + 1 + e.length() > MAX_FULL_HEADER) {
                break;
            }
            b.append(b.length() == 0 ? "" : " ").append(e);
        }
        return b.toString();
    }

    /** Queues the whole batch if every part of it has room, else nothing: null, or which queue had none. */
    private String admitted(List<Message> local, Map<String, List<Message>> relayed,
            Map<String, List<Message>> onward) {
        synchronized (accepting) {
            if (stopping) {
                return settings.domain() + " is shutting down";
            }
            String full = fits(relayed, true);
            if (full == null) {
                full = fits(onward, false);
            }
            if (full == null && !local.isEmpty()) {
                full = gateway.deliverAll(local);
            }
            if (full != null) {
                return full;
            }
            relayed.forEach(relay::addAll);
            onward.forEach((d, ms) -> ms.forEach(m -> enqueue(d, m, true)));
            return null;
        }
    }

    /** Puts {@code m} in the list it goes to and returns null; or returns why it cannot go anywhere. */
    private ErrorText sort(String fromDomain, Message m, List<Message> local, Map<String, List<Message>> relayed,
            Map<String, List<Message>> onward) throws Routes.RouteException {
        if (m.command().isStreamOnly()) {
            return new ErrorText(ErrorCode.MALFORMED, m.command() + " belongs to a TCP stream, not to the HTTP tunnel");
        }
        String d = Name.domainOf(m.to());
        if (d.equals(settings.domain())) {
            if (m.to().equals(gateway.name())) {
                return new ErrorText(ErrorCode.NO_ROUTE, gateway.name() + " takes no messages of its own");
            }
            try {
                if (!routes.endpointExists(m.to())) {
                    return new ErrorText(ErrorCode.NO_ROUTE, m.to() + " is not registered");
                }
            } catch (Routes.RouteException registryDown) {
                // cannot tell now: hold it; the janitor fails it later if the endpoint is gone
            }
            local.add(m);
        } else if (routes.relaysFor(d)) {
            relayed.computeIfAbsent(d, k -> new ArrayList<>()).add(m);
        } else if (routes.relaysFor(fromDomain) && Name.isDomain(d)) {
            onward.computeIfAbsent(d, k -> new ArrayList<>()).add(m);
        } else {
            return new ErrorText(ErrorCode.NO_ROUTE, "domain " + d + " is not served by " + settings.domain()
                    + "'s PC servlet");
        }
        return null;
    }

    /** Messages back to back, as a POST body or an answer carries them. */
    static byte[] encodeAll(List<Message> messages) {
        ByteBuffer out = ByteBuffer.allocate(messages.stream().mapToInt(Message::encodedLength).sum());
        messages.forEach(m -> CODEC.encode(m, out));
        return out.array();
    }

    /** Null when every share fits its queue (relay or outbound), else which one does not. */
    private String fits(Map<String, List<Message>> wanted, boolean isRelay) {
        for (Map.Entry<String, List<Message>> e : wanted.entrySet()) {
            DomainQueue q = isRelay ? relay.queue(e.getKey()) : outbound.get(e.getKey());
            long size = e.getValue().stream().mapToLong(Message::encodedLength).sum();
            if (q != null && !q.hasRoom(size, e.getValue().size())) {
                return q.describe() + "; " + e.getValue().size() + " more, " + size + " bytes, came";
            }
        }
        return null;
    }

    private Answer busy(int status, ErrorCode code, String sentence) {
        long seconds = settings.retryAfter().toSeconds();
        return new Answer(status, "text/plain; charset=utf-8", new ErrorText(code, sentence).toBytes(), seconds,
                null);
    }

    /**
     * The ERRORs in a 200 answer to a batch of {@code batchSize} messages: at most one each, so the body is
     * read up to that many of the largest ERROR; what decodes before a bad byte or that bound is kept.
     */
    List<Message> decodeErrors(ResponseBody body, int batchSize) {
        List<Message> errors = new ArrayList<>();
        if (body == null) {
            return errors;
        }
        long limit = (long) batchSize * (20 + 255 + 255 + 32 + MAX_SENTENCE * 4);
        StreamDecoder decoder = CODEC.newStreamDecoder();
        byte[] chunk = new byte[64 * 1024];
        long total = 0;
        try (InputStream in = body.byteStream()) {
            for (int n; (n = in.read(chunk)) > 0;) {
                total += n;
                if (total > limit) {
                    LOG.warn("{}: an answer to {} messages passed {} bytes; the ERRORs after that were dropped",
                            settings.domain(), batchSize, limit);
                    break;
                }
                decoder.feed(chunk, 0, n, errors::add);
            }
        } catch (IOException e) {
            LOG.warn("{}: an answer's ERRORs could not all be read: {}", settings.domain(), e.getMessage());
        }
        return errors;
    }

    /** A batch a poll answered, whole; null when it cannot be read whole (it is polled again). */
    List<Message> decodeBatch(ResponseBody body) {
        List<Message> batch = new ArrayList<>();
        try (InputStream in = body.byteStream()) {
            if (read(in, batch)) {
                return batch;
            }
            LOG.warn("{}: a polled batch passed maxBatchBytes {} plus one message", settings.domain(),
                    settings.maxBatchBytes());
        } catch (IOException e) {
            LOG.warn("{}: a polled batch could not be read: {}", settings.domain(), e.getMessage());
        }
        return null;
    }

    // ---------------------------------------------------------------- inbound: long polls of relayed domains

    /** A long poll from an outbound-only domain that registered with this one as its via. */
    Answer poll(String domain, String waitParam, String ackParam) throws InterruptedException {
        if (!Name.isDomain(domain)) {
            return Answer.text(400, ErrorCode.MALFORMED, "parameter domain \"" + domain + "\" is missing or not "
                    + Name.DOMAIN_RULE);
        }
        long wait;
        long ack;
        try {
            wait = waitParam == null ? 30 : Long.parseLong(waitParam);
            ack = ackParam == null || ackParam.isEmpty() ? Long.MIN_VALUE : Long.parseLong(ackParam);
        } catch (NumberFormatException e) {
            return Answer.text(400, ErrorCode.MALFORMED, "wait \"" + waitParam + "\" and ack \"" + ackParam
                    + "\" must be whole numbers");
        }
        if (wait < 0 || wait > 60) {
            return Answer.text(400, ErrorCode.MALFORMED, "wait " + wait + " is outside 0..60 seconds");
        }
        boolean relayed;
        try {
            relayed = routes.relaysFor(domain);
        } catch (Routes.RouteException registryDown) {
            return busy(503, ErrorCode.INTERNAL, registryDown.getMessage());
        }
        if (!relayed) {
            return Answer.text(403, ErrorCode.FORBIDDEN, "domain " + domain + " is not registered with via "
                    + settings.domain());
        }
        if (closed) {
            return busy(503, ErrorCode.SHUTTING_DOWN, settings.domain() + " is shutting down");
        }
        // polls go on while stopping: they are how the relay queues drain
        Relay.Batch batch = relay.poll(domain, ack, TimeUnit.SECONDS.toNanos(wait));
        if (batch == null) {
            return new Answer(204, null, new byte[0], 0, null);
        }
        byte[] body = encodeAll(batch.messages());
        metrics.batchesSent.increment();
        metrics.messagesSent.add(batch.messages().size());
        return new Answer(200, "application/x-gma", body, 0, Long.toString(batch.id()));
    }

    // ---------------------------------------------------------------- the rest

    Settings settings() {
        return settings;
    }

    String domain() {
        return settings.domain();
    }

    Security security() {
        return settings.security();
    }

    /**
     * {@code b} with this PC servlet's credentials for the PC servlet of {@code domain} at {@code url}.
     *
     * @throws IllegalArgumentException when security is on and the URL is not https: the credentials would cross
     *     the network in plaintext; nothing is sent (the sentence names the URL)
     */
    Request.Builder authorized(Request.Builder b, String domain, String url) {
        settings.security().requireSecureUrl(url, "domain " + domain + "'s URL");
        String bearer = settings.security().bearer(domain);
        return bearer == null ? b : b.header("Authorization", bearer);
    }

    String url() {
        return url;
    }

    Routes routes() {
        return routes;
    }

    RegistryClient registry() {
        return registry;
    }

    Metrics metrics() {
        return metrics;
    }

    Relay relay() {
        return relay;
    }

    Gateway gateway() {
        return gateway;
    }

    OkHttpClient http() {
        return http;
    }

    boolean isStopping() {
        return stopping;
    }

    /** Drained and closed: forwarders and pollers end. */
    boolean isClosed() {
        return closed;
    }

    Map<String, DomainQueue> outboundQueues() {
        return outbound;
    }

    /**
     * Drains, then stops: POSTs and polls are answered 503 and the uplinks stop being read (what endpoints
     * have not sent stays with them, for the next run); then the queues are given up to drainTimeout to empty.
     * What is left is logged and counted as dropped.
     *
     * @return how many messages could not be delivered
     */
    int shutdown() {
        if (stopping) {
            return 0;
        }
        stopping = true;
        gateway.hold();
        outbound.values().forEach(DomainQueue::hurry);
        long deadline = System.nanoTime() + settings.drainTimeout().toNanos();
        while (System.nanoTime() < deadline && !drained()) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        timer.shutdownNow();
        if (poller != null) {
            poller.interrupt();
        }
        synchronized (accepting) {
            closed = true; // no POST is between its check and its queueing now
        }
        int fromQueues = relay.drain();
        for (DomainQueue q : outbound.values()) {
            fromQueues += q.drain().size();
        }
        metrics.drops.add(fromQueues);
        forwarders.values().forEach(Thread::interrupt);
        int left = fromQueues;
        for (Gateway.QueueInfo q : gateway.queues()) {
            left += (int) q.messages(); // counted as drops when the gateway closes, one by one
        }
        gateway.close();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
        if (left > 0) {
            LOG.warn("{}: stopped with {} messages undelivered after draining for {} ms", settings.domain(), left,
                    settings.drainTimeout().toMillis());
        } else {
            LOG.info("{}: stopped; every queue was drained", settings.domain());
        }
        return left;
    }

    private boolean drained() {
        for (DomainQueue q : outbound.values()) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        for (DomainQueue q : relay.queues().values()) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        for (Gateway.QueueInfo q : gateway.queues()) {
            if (q.messages() > 0 && q.connected()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        shutdown();
    }
}
