package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.link.LinkLimit;
import io.gma.internal.link.SendQueue;
import io.gma.registry.api.Kind;
import io.gma.security.Security;
import io.gma.wire.Name;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * Options of a {@link Producer} or {@link Consumer}. Every setter checks its argument and says its default;
 * {@link #build()} checks the combination, starts the endpoint (listening socket, registration) and returns it.
 *
 * <pre>{@code
 * Producer p = Producer.builder().registry("http://127.0.0.1:8080").domain("dsg").label("cpu").build();
 * }</pre>
 *
 * @param <T> {@link Producer} or {@link Consumer}
 */
public final class EndpointBuilder<T> {
    /** The attribute under which {@link #metrics} registers the page's URL. */
    public static final String METRICS_ATTRIBUTE = "metrics";
    /** {@link #maxOutboxBytes}'s default: 64 MiB. */
    public static final long DEFAULT_MAX_OUTBOX_BYTES = 64L << 20;
    private static final long MIN_OUTBOX_BYTES = 1L << 20;
    private static final long MAX_OUTBOX_BYTES = 1L << 40;

    private final Kind kind;
    private final Function<EndpointCore, T> wrap;
    String registry;
    String domain;
    String label;
    boolean exact;
    boolean takeOver;
    /** The outbox's directory, or null: none. */
    Path outbox;
    long maxOutboxBytes = DEFAULT_MAX_OUTBOX_BYTES;
    boolean outboxForceOnSend;
    String host = "127.0.0.1";
    InetSocketAddress pcServlet;
    final Map<String, String> attributes = new LinkedHashMap<>();
    long maxQueuedBytes = 8L << 20;
    int maxQueuedMessages = SendQueue.MAX_MESSAGES;
    FullQueuePolicy policy = FullQueuePolicy.BLOCK;
    Duration blockTimeout = Duration.ofSeconds(10);
    Duration requestTimeout = Duration.ofSeconds(30);
    Duration pingInterval = Duration.ofSeconds(15);
    Duration lease = Duration.ofSeconds(30);
    int maxMessageBytes = 16 << 20;
    int maxLinks = LinkLimit.DEFAULT_MAX;
    int ioThreads = IoThreads.defaultLoops();
    Executor executor;
    MessageHandler handler;
    /** How long a receipt is awaited; null: none is asked for (the default). */
    Duration receipts;
    /** The most receipts awaited at once; 0: not set, which is {@link Receipts#DEFAULT_AWAITED}. */
    int maxAwaitedReceipts;
    /** Null: none given, which is {@link Security#unlessExposed} of the host. */
    Security security;
    /** Where {@code GET /metrics} is served, unresolved; null: nowhere (the default). */
    InetSocketAddress metrics;

    EndpointBuilder(Kind kind, Function<EndpointCore, T> wrap) {
        this.kind = kind;
        this.wrap = wrap;
    }

    /**
     * The uplink address of this domain's PC servlet, {@code host:port} (IPv6 as {@code [::1]:port}): messages
     * for other domains go there, and messages from them come back over it. Default none: the endpoint reaches
     * its own domain only.
     */
    public EndpointBuilder<T> pcServlet(String hostAndPort) {
        this.pcServlet = hostPort("pcServlet", hostAndPort);
        return this;
    }

    /** Parses {@code host:port} or {@code [v6]:port}, unresolved. */
    static InetSocketAddress hostPort(String field, String value) {
        int colon = value == null ? -1 : value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new IllegalArgumentException(field + " \"" + value + "\" is not host:port");
        }
        HostAndPort a = HostAndPort.parse(value, null);
        if (a.port() < 1) {
            throw new IllegalArgumentException(field + " \"" + value + "\": port is not 1..65535");
        }
        return InetSocketAddress.createUnresolved(a.host(), a.port());
    }

    /** {@code [HOST:]PORT} taken apart (HOST in brackets for IPv6); a port that is no number 0..65535 is -1. */
    private record HostAndPort(String host, int port) {
        static HostAndPort parse(String value, String defaultHost) {
            int colon = value.lastIndexOf(':');
            String h = colon < 0 ? defaultHost : value.substring(0, colon);
            if (h.startsWith("[") && h.endsWith("]")) {
                h = h.substring(1, h.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            return new HostAndPort(h, port < 0 || port > 65_535 ? -1 : port);
        }
    }

    /**
     * TLS on every link (to peers, to the PC servlet, to the registry), the credentials this endpoint shows,
     * and who may send to it ({@code send} rules, the target being this endpoint's name). With security on, a
     * peer that cannot prove who it is is refused with UNAUTHORIZED, one the rules do not allow with
     * FORBIDDEN, and a peer's messages must carry the name it said in HELLO. Default: {@link
     * Security#insecure()} (plaintext, anyone may send; a warning is logged at start) while {@link #host} is a
     * loopback address; beyond, build() refuses until security, or {@code Security.insecure()}, is given.
     */
    public EndpointBuilder<T> security(Security security) {
        this.security = Objects.requireNonNull(security, "security");
        return this;
    }

    /**
     * The registry's base URL, such as {@code http://127.0.0.1:8080}, or the URLs of several registries that share
     * one database, separated by commas: the registration, its renewals and look-ups go to the first that answers
     * ({@code RegistryClient.builder}, docs/registry.md "Several registries"). Required.
     */
    public EndpointBuilder<T> registry(String url) {
        this.registry = Objects.requireNonNull(url, "url");
        return this;
    }

    /** The endpoint's domain, 1..64 of [A-Za-z0-9.-]. Required. */
    public EndpointBuilder<T> domain(String domain) {
        this.domain = Name.requireDomain("domain", domain);
        return this;
    }

    /** The label to register, 1..64 of [A-Za-z0-9._-]; the registry adds a nonce. Required. */
    public EndpointBuilder<T> label(String label) {
        this.label = Name.requireLabel("label", label);
        return this;
    }

    /**
     * Register as exactly {@code label@domain}, for a well-known service. Default false: the registry adds a nonce.
     * While a live endpoint holds the name, {@link #build()} fails with FORBIDDEN (the registry's 409 CONFLICT,
     * its cause), unless {@link #takeOver} says to take it over from an endpoint that no longer answers.
     */
    public EndpointBuilder<T> exactLabel(boolean exact) {
        this.exact = exact;
        return this;
    }

    /**
     * With {@link #exactLabel}: when the registry says the name is held (its endpoint crashed, say, and its lease
     * has not run out yet: up to a lease), take it over at once, if and only if (1) the endpoint registered under
     * it no longer answers at its registered host and port: nothing listens there, or another name answers
     * there (a probe connects, says HELLO and reads the name the answer comes from), and (2) this endpoint's
     * identity registered it (the registry's owner of the name; with security off every caller is
     * {@code anonymous}). A live holder, or one that may be live (it took the connection but said nothing within
     * 2 s, its host did not answer within 1 s), is not displaced: build() fails with FORBIDDEN naming it, and
     * so does a name of another identity. Default false; an {@link #outbox} turns it on.
     */
    public EndpointBuilder<T> takeOver(boolean takeOver) {
        this.takeOver = takeOver;
        return this;
    }

    /**
     * A durable outbox in {@code dir} (made if need be; one endpoint's alone): every message this endpoint
     * originates with {@code send}, {@code publish} or {@code subscribe} is appended there before the call
     * returns, and stays until the first hop (the peer, or this domain's PC servlet) acknowledges it, or it fails
     * and its {@link Sent} says so. After a crash of this process (kill -9, an OOM kill) the next start with the
     * same directory and exact name takes the name over ({@link #takeOver}) and sends what was not acknowledged
     * again, in order and before anything new, with the same sequence numbers: receivers drop what they had
     * already (they remember the last 65,536 numbers of each sender), so nothing is lost and nothing is delivered
     * twice. A close keeps what was not acknowledged for the next start too. REQUESTs and control messages are
     * not kept, nor the table commands whose answers are awaited (TABLE_QUERY, TABLE_LATEST, TABLE_HISTORY):
     * nobody awaits a request's reply after a crash, and a query sent again would subscribe the run before's.
     *
     * <p>{@code send} returns once the message is written to the operating system, which a crash of this process
     * does not undo; the outbox forces it to disk within about a millisecond (group commit), so a power loss or
     * an operating-system crash may lose the last milliseconds' messages, unless {@link #outboxForceOnSend}.
     * Default none: what is queued lives in memory and is failed with SHUTTING_DOWN at close.
     *
     * @throws NullPointerException if {@code dir} is null
     */
    public EndpointBuilder<T> outbox(Path dir) {
        this.outbox = Objects.requireNonNull(dir, "dir");
        return this;
    }

    /**
     * The outbox's files on disk together, at most: 1 MiB..1 TiB, default 64 MiB. A full outbox pushes back as a
     * full send queue does, by the {@link #fullQueuePolicy}: BLOCK waits up to {@link #blockTimeout} for room,
     * FAIL throws QUEUE_FULL at once. Room comes back a segment (a sixteenth of this) at a time, once every
     * message in it is acknowledged.
     */
    public EndpointBuilder<T> maxOutboxBytes(long bytes) {
        if (bytes < MIN_OUTBOX_BYTES || bytes > MAX_OUTBOX_BYTES) {
            throw new IllegalArgumentException("maxOutboxBytes " + bytes + " is outside " + MIN_OUTBOX_BYTES + ".."
                    + MAX_OUTBOX_BYTES);
        }
        this.maxOutboxBytes = bytes;
        return this;
    }

    /**
     * Whether {@code send} returns only once its message is forced to the outbox's disk (fsync), so that it
     * survives a power loss too: about a millisecond a send on one thread; sends on several threads share each
     * force (group commit). Default false: {@code send} returns once the message reached the operating system,
     * which survives a crash of this process.
     */
    public EndpointBuilder<T> outboxForceOnSend(boolean force) {
        this.outboxForceOnSend = force;
        return this;
    }

    /** The address others reach this endpoint at, and that it listens on. Default 127.0.0.1. */
    public EndpointBuilder<T> host(String host) {
        this.host = Objects.requireNonNull(host, "host");
        return this;
    }

    /** A key/value pair registered with the endpoint, queryable through the registry's attributes view. */
    public EndpointBuilder<T> attribute(String key, String value) {
        attributes.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * Serves {@code GET /metrics} at {@code address}, {@code [HOST:]PORT} (IPv6 as {@code [::1]:PORT}): every
     * field of {@link Endpoint#stats()} in the Prometheus text format 0.0.4, as {@code gma_endpoint_*} metrics
     * labelled {@code endpoint="<name>"} (docs/configuration.md lists them), over HTTPS when the {@link #security}
     * has TLS. HOST defaults to 127.0.0.1; PORT 0 takes any free one. The endpoint registers the page's URL as its
     * attribute {@code metrics} ({@code http://127.0.0.1:9464/metrics}), so that a query finds it:
     * {@code SELECT name, value FROM attributes WHERE key = 'metrics'}. Callers on this machine are always
     * answered; callers from other hosts only when the security authenticates, and then with a token made for
     * this endpoint's name or a client certificate (so a HOST beyond this machine needs such a security). The page
     * stops with the endpoint. Default: none.
     *
     * @throws IllegalArgumentException if {@code address} is not {@code [HOST:]PORT} with PORT 0..65535
     */
    public EndpointBuilder<T> metrics(String address) {
        HostAndPort a = HostAndPort.parse(Objects.requireNonNull(address, "address"), "127.0.0.1");
        if (a.host().isEmpty() || a.port() < 0) {
            throw new IllegalArgumentException("metrics \"" + address + "\" is not [HOST:]PORT with PORT 0..65535");
        }
        this.metrics = InetSocketAddress.createUnresolved(a.host(), a.port());
        return this;
    }

    /** Bytes of data per peer, unsent plus unacknowledged, 1 KiB..1 GiB. Default 8 MiB. */
    public EndpointBuilder<T> maxQueuedBytes(long bytes) {
        if (bytes < 1024 || bytes > 1L << 30) {
            throw new IllegalArgumentException("maxQueuedBytes " + bytes + " is outside 1024..1073741824");
        }
        this.maxQueuedBytes = bytes;
        return this;
    }

    /**
     * Data messages per peer, unsent plus unacknowledged, 1..65,536 (default 65,536): no more than a receiver
     * remembers for deduplication, so a resent message is always recognised.
     */
    public EndpointBuilder<T> maxQueuedMessages(int messages) {
        if (messages < 1 || messages > SendQueue.MAX_MESSAGES) {
            throw new IllegalArgumentException("maxQueuedMessages " + messages + " is outside 1.."
                    + SendQueue.MAX_MESSAGES);
        }
        this.maxQueuedMessages = messages;
        return this;
    }

    /**
     * What a send does when a peer's queue is full. Default BLOCK, up to {@link #blockTimeout}; except in a
     * handler running on a link's event loop, where BLOCK fails at once, since waiting there would stop the
     * reads whose ACKs make room.
     */
    public EndpointBuilder<T> fullQueuePolicy(FullQueuePolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
        return this;
    }

    /** How long a BLOCK send waits for room before QUEUE_FULL. Default 10 s. */
    public EndpointBuilder<T> blockTimeout(Duration timeout) {
        this.blockTimeout = positive("blockTimeout", timeout);
        return this;
    }

    /** {@link #blockTimeout} in nanoseconds, as the queues wait it (a timeout past Long.MAX_VALUE ns: that). */
    long blockNanos() {
        return blockTimeout.compareTo(Duration.ofNanos(Long.MAX_VALUE)) < 0 ? blockTimeout.toNanos() : Long.MAX_VALUE;
    }

    /** The default timeout of {@code request}. Default 30 s. */
    public EndpointBuilder<T> requestTimeout(Duration timeout) {
        this.requestTimeout = positive("requestTimeout", timeout);
        return this;
    }

    /** Idle time before a PING; a peer silent for three intervals is dead. 10 ms..1 h, default 15 s. */
    public EndpointBuilder<T> pingInterval(Duration interval) {
        positive("pingInterval", interval);
        if (interval.toMillis() < 10 || interval.toHours() > 1) {
            throw new IllegalArgumentException("pingInterval " + interval + " is outside 10 ms..1 h");
        }
        this.pingInterval = interval;
        return this;
    }

    /** The registration's lease, renewed in the background every third of it. Whole seconds, default 30 s. */
    public EndpointBuilder<T> lease(Duration lease) {
        positive("lease", lease);
        if (lease.toSeconds() < 1 || lease.toNanosPart() != 0) {
            throw new IllegalArgumentException("lease " + lease + " is not a whole number of seconds");
        }
        this.lease = lease;
        return this;
    }

    /** The longest data accepted from a peer, 8..2^31-1024 bytes. Default 16 MiB. */
    public EndpointBuilder<T> maxMessageBytes(int bytes) {
        if (bytes < 8) {
            throw new IllegalArgumentException("maxMessageBytes " + bytes + " is under 8");
        }
        this.maxMessageBytes = bytes;
        return this;
    }

    /**
     * The most links this endpoint holds open at once, to and from its peers and its uplink together,
     * 1..1,000,000. Default 10,000. A peer's link past it is refused at HELLO with {@code ERROR QUEUE_FULL} (it
     * keeps its messages and tries again after its back-off), a link this endpoint opens past it is closed as it
     * opens (its messages wait likewise), and the links open go on; both are counted
     * ({@link EndpointStats#linksOverLimit}). Each link holds a socket, so the process's open-file limit must be
     * higher (docs/configuration.md, "Limits").
     *
     * @throws IllegalArgumentException if {@code links} is outside 1..1,000,000
     */
    public EndpointBuilder<T> maxLinks(int links) {
        this.maxLinks = LinkLimit.check(links);
        return this;
    }

    /**
     * How many event loops serve this endpoint's links, 1..1024; default the number of cores. Each is a thread
     * and a selector that reads, writes and times many links, so threads do not grow with links
     * (docs/CONCURRENCY.md). Message handlers run on them unless an {@link #executor} is given.
     *
     * @throws IllegalArgumentException if {@code threads} is outside 1..1024
     */
    public EndpointBuilder<T> ioThreads(int threads) {
        this.ioThreads = IoThreads.check(threads);
        return this;
    }

    /**
     * Runs the message handler on this executor (a virtual-thread executor on Java 21+ fits). Default none: the
     * handler runs on the link's event loop, which it holds up while it runs: the link then reads nothing more,
     * which holds its peer back once the peer's send queue is full, but its ACKs and keepalive go on, sent for it,
     * and the loop's other links move to another thread after 10 to 20 ms (docs/CONCURRENCY.md), so a slow handler
     * never makes the peer take this endpoint for dead, nor holds up other peers.
     */
    public EndpointBuilder<T> executor(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
        return this;
    }

    /**
     * End-to-end acknowledgement: every message this endpoint sends with {@code send}, {@code publish} (to each
     * subscriber) or {@code subscribe} asks its destination endpoint for a receipt, and {@link Sent#delivered()}
     * completes when the receipt comes back: when the destination's handler returned from {@code onMessage} for
     * it, in this domain or another. A receipt not back within {@code timeout} of the send fails delivered() with
     * TIMEOUT, as does a destination that sends none (docs/protocol-choices.md, "Receipts"). At most
     * {@link #maxAwaitedReceipts} are awaited at once; a send past them waits, fails or gives up the oldest
     * receipt, as the {@link #fullQueuePolicy} says. Each receipt is a small REPLY back, and each message a
     * little memory while its receipt is awaited (about 300 bytes). Default: off, and a send costs what it did;
     * {@link Sent#delivered()} then throws.
     *
     * @param timeout 10 ms..24 h, counted from the send
     * @throws IllegalArgumentException if {@code timeout} is outside 10 ms..24 h
     */
    public EndpointBuilder<T> receipts(Duration timeout) {
        positive("receipts timeout", timeout);
        if (timeout.toMillis() < 10 || timeout.compareTo(Duration.ofHours(24)) > 0) {
            throw new IllegalArgumentException("receipts timeout " + timeout + " is outside 10 ms..24 h");
        }
        this.receipts = timeout;
        return this;
    }

    /**
     * The most messages whose receipt is awaited at once ({@link #receipts}), 1..1,048,576; what bounds the
     * memory they take. Default 65,536.
     *
     * @throws IllegalArgumentException if {@code receipts} is outside 1..1,048,576
     */
    public EndpointBuilder<T> maxAwaitedReceipts(int receipts) {
        if (receipts < 1 || receipts > Receipts.MAX_AWAITED) {
            throw new IllegalArgumentException("maxAwaitedReceipts " + receipts + " is outside 1.."
                    + Receipts.MAX_AWAITED);
        }
        this.maxAwaitedReceipts = receipts;
        return this;
    }

    /** Receives DATA, REQUEST and application commands. Default: none (such messages are dropped). */
    public EndpointBuilder<T> onMessage(MessageHandler handler) {
        this.handler = Objects.requireNonNull(handler, "handler");
        return this;
    }

    /**
     * Starts the endpoint: opens its listening socket on an ephemeral port and registers it.
     *
     * @throws IllegalStateException if registry, domain or label is missing, or security has TLS without a key;
     *     maxAwaitedReceipts is set without receipts; takeOver without exactLabel; an outbox without exactLabel,
     *     or with DROP_OLDEST; metrics with the attribute metrics given too, or beyond this machine without a
     *     security that authenticates; an outbox whose directory another live process uses (naming it and the
     *     process), or that holds another endpoint's messages
     * @throws IllegalArgumentException if the system property {@code gma.maxUnauthenticated} or
     *     {@code gma.maxUnauthenticatedPerAddress} is not a whole number from 1 to 1,000,000; or, with
     *     security on, the registry URL is not https (nothing was sent: credentials never cross the network in
     *     plaintext)
     * @throws EndpointException if the registry refuses or cannot be reached (FORBIDDEN for an exact name held:
     *     see {@link #exactLabel} and {@link #takeOver}), the socket or the {@link #metrics} port cannot be opened
     *     (INTERNAL, naming the port), or the outbox's directory cannot be read or written (INTERNAL)
     */
    public T build() throws EndpointException {
        java.util.StringJoiner missing = new java.util.StringJoiner(" ");
        if (registry == null) {
            missing.add("registry");
        }
        if (domain == null) {
            missing.add("domain");
        }
        if (label == null) {
            missing.add("label");
        }
        if (missing.length() > 0) {
            throw new IllegalStateException("registry, domain and label are required; missing: " + missing);
        }
        if (takeOver && !exact) {
            throw new IllegalStateException("takeOver needs exactLabel(true): a name with a nonce is new on every"
                    + " start, so there is nothing to take over");
        }
        if (outbox != null && !exact) {
            throw new IllegalStateException("outbox " + outbox + " needs exactLabel(true): what it keeps goes out"
                    + " again after a restart under the same name with the same sequence numbers, which is how"
                    + " receivers tell it from new messages, and a name with a nonce is new on every start");
        }
        if (outbox != null && policy == FullQueuePolicy.DROP_OLDEST) {
            throw new IllegalStateException("outbox " + outbox + " cannot go with fullQueuePolicy DROP_OLDEST: an"
                    + " outbox keeps what send accepted until it is delivered, and DROP_OLDEST drops accepted"
                    + " messages; choose BLOCK or FAIL");
        }
        if (maxAwaitedReceipts != 0 && receipts == null) {
            throw new IllegalStateException("maxAwaitedReceipts " + maxAwaitedReceipts + " is set, but no receipts"
                    + " are asked for: set receipts(timeout) too");
        }
        if (security == null) {
            security = Security.unlessExposed(host, "endpoint " + label + "@" + domain);
        }
        if (security.tls() != null && !security.tls().hasKey()) {
            throw new IllegalStateException("security has TLS without a key store: an endpoint accepts links, so it"
                    + " needs a certificate of its own");
        }
        if (metrics != null) {
            checkMetrics();
        }
        return wrap.apply(EndpointCore.start(this));
    }

    Kind kind() {
        return kind;
    }

    /** The combinations {@link #metrics} refuses: its attribute given by hand; beyond this machine, unsecured. */
    private void checkMetrics() {
        if (attributes.containsKey(METRICS_ATTRIBUTE)) {
            throw new IllegalStateException("attribute " + METRICS_ATTRIBUTE + " is given, and metrics("
                    + metrics.getHostString() + ":" + metrics.getPort() + ") registers its own: drop one");
        }
        boolean loopback;
        try {
            loopback = java.net.InetAddress.getByName(metrics.getHostString()).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("metrics host " + metrics.getHostString() + " is not known here", e);
        }
        if (!loopback && !security.authenticates()) {
            throw new IllegalStateException("metrics " + metrics.getHostString() + ":" + metrics.getPort()
                    + " listens beyond this machine, where only authenticated callers are answered, and this"
                    + " endpoint's security authenticates nobody: give metrics a PORT alone (127.0.0.1), or a"
                    + " security with tokens or client certificates");
        }
    }

    /** Whether a held exact name is taken over: asked for, or an outbox's. */
    boolean takesOver() {
        return takeOver || outbox != null;
    }

    private static Duration positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " " + d + " is not positive");
        }
        return d;
    }
}
