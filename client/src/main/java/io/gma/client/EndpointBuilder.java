package io.gma.client;

import io.gma.internal.link.SendQueue;
import io.gma.registry.api.Kind;
import io.gma.security.Security;
import io.gma.wire.Name;
import java.net.InetSocketAddress;
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

    private final Kind kind;
    private final Function<EndpointCore, T> wrap;
    String registry;
    String domain;
    String label;
    boolean exact;
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
    Executor executor;
    MessageHandler handler;
    /** How long a receipt is awaited; null: none is asked for (the default). */
    Duration receipts;
    /** The most receipts awaited at once; 0: not set, which is {@link Receipts#DEFAULT_AWAITED}. */
    int maxAwaitedReceipts;
    /** Null: none given, which is {@link Security#unlessExposed} of the host. */
    Security security;

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
        String h = value.substring(0, colon);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException(field + " \"" + value + "\": port is not 1..65535");
        }
        return InetSocketAddress.createUnresolved(h, port);
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

    /** The registry's base URL, such as {@code http://127.0.0.1:8080}. Required. */
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

    /** Register as exactly {@code label@domain}, for a well-known service; start fails if it is taken. */
    public EndpointBuilder<T> exactLabel(boolean exact) {
        this.exact = exact;
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
     * handler running on a link's I/O thread, where BLOCK fails at once, since waiting there would stop the
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
     * Runs the message handler on this executor (a virtual-thread executor on Java 21+ fits). Default none: the
     * handler runs on the link's I/O thread and must not block.
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
     * @throws IllegalStateException if registry, domain or label is missing, or security has TLS without a key,
     *     or maxAwaitedReceipts is set without receipts
     * @throws IllegalArgumentException if the system property {@code gma.maxUnauthenticated} or
     *     {@code gma.maxUnauthenticatedPerAddress} is not a whole number from 1 to 1,000,000; or, with
     *     security on, the registry URL is not https (nothing was sent: credentials never cross the network in
     *     plaintext)
     * @throws EndpointException if the registry refuses or cannot be reached, or the socket cannot be opened
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
        return wrap.apply(EndpointCore.start(this));
    }

    Kind kind() {
        return kind;
    }

    private static Duration positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " " + d + " is not positive");
        }
        return d;
    }
}
