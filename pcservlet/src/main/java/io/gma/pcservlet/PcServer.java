package io.gma.pcservlet;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import io.gma.internal.link.IoThreads;
import io.gma.internal.link.LinkLimit;
import io.gma.registry.DashboardServlet;
import io.gma.registry.Https;
import io.gma.security.HttpProxy;
import io.gma.security.Security;
import io.gma.wire.Name;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A domain's PC servlet, embedded and started in one call: the server that runs its {@link TunnelServlet} on
 * Jetty 12 and the TCP listener for its endpoints' uplinks, over one {@link PcNode}.
 *
 * <pre>{@code
 * try (PcServer pc = PcServer.builder("east", registryUrl).start()) {
 *     Producer p = Producer.builder().registry(registryUrl).domain("east").pcServlet(pc.uplink())...
 * }
 * }</pre>
 *
 * <p>Standalone: {@code java -jar pcservlet/target/gma-pcservlet.jar --domain east --registry URL} (see
 * {@link #main}).
 */
public final class PcServer implements AutoCloseable {
    private final Settings settings;
    private PcNode node;
    private Server server;
    private String url;
    private int httpPort;

    private PcServer(Settings settings) {
        this.settings = settings;
    }

    /**
     * How many batches a PC servlet posts to one domain at once unless told otherwise: one, as before several
     * could be, until a quiet machine has measured what more costs and gains (docs/pcservlet.md).
     */
    public static final int DEFAULT_BATCHES_IN_FLIGHT = 1;

    /**
     * @param domain the domain it serves
     * @param registryUrl the registry's base URL, or the URLs of several registries that share one database,
     *     separated by commas (calls go on to the next when one does not answer: docs/registry.md)
     */
    public static Builder builder(String domain, String registryUrl) {
        return new Builder(domain, registryUrl);
    }

    /**
     * Runs a PC servlet until the process is stopped: {@link PcCommand}, which is also {@code gma pc}, as
     * {@code java -jar pcservlet/target/gma-pcservlet.jar --domain east --registry URL} runs it. Exit status 0
     * after a clean stop (Ctrl-C, SIGTERM, the end of --duration), 2 for bad arguments, 1 when it cannot start;
     * {@code --help} lists every option and every exit status.
     */
    public static void main(String[] args) {
        PcCommand.main(args);
    }

    private PcServer start() throws Exception {
        node = new PcNode(settings);
        ServerConnector connector = Https.listener("gma-pc-" + settings.domain() + "-http", 64, settings.host(),
                settings.httpPort(), settings.security());
        Server s = connector.getServer();
        ServletContextHandler context = new ServletContextHandler("/");
        ServletHolder tunnel = new ServletHolder("gma-pc", new TunnelServlet(node));
        tunnel.setAsyncSupported(true); // long polls wait without a thread
        context.addServlet(tunnel, "/*");
        DashboardServlet.mount(context, TunnelServlet.REGISTRY_QUERY);
        s.setHandler(context);
        try {
            Https.start(s, connector, "--http-port (PcServer.Builder.httpPort)");
            httpPort = connector.getLocalPort();
            url = settings.publicUrl() != null ? settings.publicUrl() : Https.url(settings.security(), connector);
            node.start(settings.via() == null ? url : null);
        } catch (Exception e) {
            node.shutdown();
            s.stop();
            throw e;
        }
        server = s;
        return this;
    }

    public String domain() {
        return settings.domain();
    }

    /** The base URL of the HTTP side ({@code /gma/v1/...} follows it). */
    public String url() {
        return url;
    }

    public int httpPort() {
        return httpPort;
    }

    /** The uplink address, {@code host:port}, as {@code EndpointBuilder.pcServlet} takes it. */
    public String uplink() {
        InetSocketAddress a = node.uplinks().address();
        String host = a.getHostString().contains(":") ? "[" + a.getHostString() + "]" : a.getHostString();
        return host + ":" + a.getPort();
    }

    public int uplinkPort() {
        return node.uplinks().address().getPort();
    }

    /**
     * Stops: POSTs are answered 503 and uplinks no longer read while the queues drain, for up to the drain
     * timeout; then the uplinks and the HTTP side close. What could not be delivered is logged.
     *
     * @return how many messages could not be delivered
     */
    public int stop() throws Exception {
        int left = node.shutdown();
        server.stop();
        return left;
    }

    @Override
    public void close() throws Exception {
        stop();
    }

    /** Settings of a PC servlet; the domain and the registry are required, the rest have defaults. */
    public static final class Builder {
        private final String domain;
        private final String registry;
        private String host = "127.0.0.1";
        private int httpPort;
        private int uplinkPort;
        private String publicUrl;
        private String via;
        private long maxQueuedBytes = 8L << 20;
        private int maxQueuedMessages = 65_536;
        private long maxTotalBytes = 64L << 20;
        private long maxEndpointBytes = 8L << 20;
        private int maxBatchBytes = 16 << 20;
        private int maxBatchesInFlight = DEFAULT_BATCHES_IN_FLIGHT;
        private int maxLinks = LinkLimit.DEFAULT_MAX;
        private int ioThreads = IoThreads.defaultLoops();
        private Duration linger = Duration.ZERO;
        private Duration retryAfter = Duration.ofSeconds(1);
        private Duration drainTimeout = Duration.ofSeconds(5);
        private Duration lease = Duration.ofSeconds(30);
        private Duration idleQueue = Duration.ofSeconds(60);
        /** Null: none given, which is {@link Security#unlessExposed} of the host. */
        private Security security;
        /** Null: in memory only. */
        private SpoolOptions spool;
        /** Null: the registry's default lease. */
        private Duration registryGrace;
        private HttpProxy proxy;
        private Compression.Mode compression = Compression.Mode.AUTO;

        private Builder(String domain, String registry) {
            this.domain = Name.requireDomain("domain", domain);
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /** The address both the HTTP side and the uplinks listen on; default 127.0.0.1. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Default 0: an ephemeral port. */
        public Builder httpPort(int port) {
            this.httpPort = port(port, "httpPort");
            return this;
        }

        /** Default 0: an ephemeral port. */
        public Builder uplinkPort(int port) {
            this.uplinkPort = port(port, "uplinkPort");
            return this;
        }

        /** The URL registered for the domain, when other domains reach it by another name (a proxy, say). */
        public Builder publicUrl(String url) {
            if (!url.startsWith("http://") && !url.startsWith("https://")) {
                throw new IllegalArgumentException("publicUrl \"" + url + "\" is not an http or https URL");
            }
            this.publicUrl = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
            return this;
        }

        /**
         * Makes the domain outbound-only: it registers no URL, sends everything by POST to the PC servlet of
         * domain {@code via}, and receives by polling it.
         */
        public Builder via(String via) {
            if (!Name.isDomain(via) || via.equals(domain)) {
                throw new IllegalArgumentException("via \"" + via + "\" is not another domain, " + Name.DOMAIN_RULE);
            }
            this.via = via;
            return this;
        }

        /** Each destination domain's queue, in bytes; default 8 MiB. */
        public Builder maxQueuedBytes(long bytes) {
            this.maxQueuedBytes = atLeast(bytes, 1024, "maxQueuedBytes");
            return this;
        }

        /** Each destination domain's queue, in messages; default 65,536. */
        public Builder maxQueuedMessages(int messages) {
            this.maxQueuedMessages = (int) atLeast(messages, 1, "maxQueuedMessages");
            return this;
        }

        /** All the domain queues together, in bytes; default 64 MiB. */
        public Builder maxTotalBytes(long bytes) {
            this.maxTotalBytes = atLeast(bytes, 1024, "maxTotalBytes");
            return this;
        }

        /** Each endpoint's queue of messages from other domains, in bytes; default 8 MiB. */
        public Builder maxEndpointBytes(long bytes) {
            this.maxEndpointBytes = atLeast(bytes, 1024, "maxEndpointBytes");
            return this;
        }

        /**
         * The most batches posted to one destination domain at once, 1..16, each waiting for its answer while the
         * next go (docs/pcservlet.md, "Several batches in flight"); default
         * {@value PcServer#DEFAULT_BATCHES_IN_FLIGHT}. The destination takes them in order; one that does not say
         * it can has one at a time.
         */
        public Builder maxBatchesInFlight(int batches) {
            if (batches < 1 || batches > StreamOrder.MAX_WINDOW) {
                throw new IllegalArgumentException("maxBatchesInFlight " + batches + " is outside 1.."
                        + StreamOrder.MAX_WINDOW);
            }
            this.maxBatchesInFlight = batches;
            return this;
        }

        /** The largest POST body sent or accepted; default 16 MiB. */
        public Builder maxBatchBytes(int bytes) {
            this.maxBatchBytes = (int) atLeast(bytes, 1024, "maxBatchBytes");
            return this;
        }

        /**
         * The most uplinks open at once, 1..1,000,000; default 10,000. An endpoint's uplink past it is refused at
         * HELLO with {@code ERROR QUEUE_FULL}: the endpoint keeps its messages and tries again after its back-off,
         * and the uplinks open go on (counted: {@code gma_pc_uplinks_over_limit_total}). Each uplink holds a
         * socket, so the process's open-file limit must be higher (docs/configuration.md, "Limits").
         *
         * @throws IllegalArgumentException if {@code links} is outside 1..1,000,000
         */
        public Builder maxLinks(int links) {
            this.maxLinks = LinkLimit.check(links);
            return this;
        }

        /**
         * How many event loops serve the uplinks, 1..1024; default the number of cores. Each is a thread and a
         * selector that reads, writes and times many uplinks, so threads do not grow with uplinks.
         *
         * @throws IllegalArgumentException if {@code threads} is outside 1..1024
         */
        public Builder ioThreads(int threads) {
            this.ioThreads = IoThreads.check(threads);
            return this;
        }

        /**
         * How long a batch waits for more messages before it is posted; default 0. Batches form anyway while
         * the previous POST to the same domain is in flight (one at a time, for order), so a busy stream is
         * batched without it, and a lone message is not held back.
         */
        public Builder linger(Duration linger) {
            if (linger.isNegative() || linger.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("linger " + linger + " is outside 0..1 s");
            }
            this.linger = linger;
            return this;
        }

        /**
         * What a 429 or 503 from this PC servlet asks senders to wait (Retry-After, in whole seconds); default
         * 1 s.
         */
        public Builder retryAfter(Duration wait) {
            if (wait.toMillis() % 1000 != 0 || wait.toSeconds() < 1 || wait.toSeconds() > 60) {
                throw new IllegalArgumentException("retryAfter " + wait + " is not a whole number of seconds in"
                        + " 1..60");
            }
            this.retryAfter = wait;
            return this;
        }

        /** How long stopping waits for the queues to drain; default 5 s. */
        public Builder drainTimeout(Duration timeout) {
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("drainTimeout " + timeout + " is negative");
            }
            this.drainTimeout = timeout;
            return this;
        }

        /** The domain registration's lease, renewed at a third of it; default 30 s. */
        public Builder lease(Duration lease) {
            if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("lease " + lease + " is under 1 s");
            }
            this.lease = lease;
            return this;
        }

        /**
         * TLS, credentials and rules for its HTTPS side, its uplinks and its calls to the registry and other
         * PC servlets. Its identity (the subject of its tokens, or its certificate's CN) is conventionally its
         * domain: receivers' {@code post} rules name it. Default: {@link Security#insecure()}, logged at start,
         * while {@link #host} is a loopback address; beyond, start() refuses until security is given.
         */
        public Builder security(Security security) {
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * Keeps what it takes on disk until the next hop has it, so that a crash or a stop loses nothing
         * (docs/pcservlet.md, "Delivery"); restarted on the same directory, it carries on from there. Default:
         * none, in memory only: what it holds is lost when the process dies, or stops before its queues drain.
         */
        public Builder spool(SpoolOptions options) {
            this.spool = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * How long after the registry began serving (or was reached again after an outage) its "not registered"
         * only means "not registered again yet": messages for a name or domain it does not know wait, within
         * their bounds, and fail with NO_ROUTE only after this (docs/pcservlet.md, "The registry restarted").
         * Default: the registry's default lease, within which every live endpoint and PC servlet registers again;
         * zero makes every "not registered" final at once.
         */
        public Builder registryGrace(Duration grace) {
            if (grace.isNegative()) {
                throw new IllegalArgumentException("registryGrace " + grace + " is negative");
            }
            this.registryGrace = grace;
            return this;
        }

        /**
         * Sends its HTTP calls (POSTs and polls to other PC servlets, calls to the registry) through an HTTP
         * forward proxy, https by CONNECT, but those to the hosts the proxy bypasses. Default: none, direct.
         */
        public Builder proxy(HttpProxy proxy) {
            this.proxy = Objects.requireNonNull(proxy, "proxy");
            return this;
        }

        /**
         * Whether batches to other PC servlets, and the answers to the polls of relayed domains, go compressed
         * (zstd) where the other side says it reads zstd and compressing pays: {@code auto} (the default), or
         * {@code off} (all plain, and this PC servlet does not say it reads zstd). docs/pcservlet.md,
         * "Compression".
         *
         * @throws IllegalArgumentException if {@code mode} is neither auto nor off
         */
        public Builder compression(String mode) {
            this.compression = Compression.Mode.parse(Objects.requireNonNull(mode, "compression"));
            return this;
        }

        /** How long a destination's queue and forwarder live without traffic; default 60 s (for tests). */
        Builder idleQueue(Duration idle) {
            this.idleQueue = idle;
            return this;
        }

        Settings settings() {
            return new Settings(domain, registry, host, httpPort, uplinkPort, publicUrl, via, maxQueuedBytes,
                    maxQueuedMessages, maxTotalBytes, maxEndpointBytes, maxBatchBytes, maxBatchesInFlight, maxLinks,
                    ioThreads, linger,
                    retryAfter,
                    drainTimeout, lease, idleQueue,
                    security != null ? security : Security.unlessExposed(host, "PC servlet of " + domain), spool,
                    registryGrace, proxy, compression);
        }

        /**
         * Starts serving: binds both ports, registers the domain with the registry, and keeps it registered.
         *
         * @throws IOException if a port cannot be bound, or the registry refuses or cannot be reached; nothing
         *     is left running
         * @throws IllegalArgumentException with security on, if the registry URL or the {@link #publicUrl} is
         *     not https: credentials would cross the network in plaintext (nothing was sent)
         */
        public PcServer start() throws Exception {
            Settings settings = settings();
            if (publicUrl != null) {
                // other domains would post their credentials to it in plaintext (and refuse to: Forwarder)
                settings.security().requireSecureUrl(publicUrl, "publicUrl");
            }
            return new PcServer(settings).start();
        }

        private static int port(int port, String name) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException(name + " " + port + " is outside 0..65535");
            }
            return port;
        }

        private static long atLeast(long value, long min, String name) {
            if (value < min) {
                throw new IllegalArgumentException(name + " " + value + " is under " + min);
            }
            return value;
        }
    }
}
