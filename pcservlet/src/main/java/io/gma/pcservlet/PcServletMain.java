package io.gma.pcservlet;

import io.gma.security.Security;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/** The standalone PC servlet's command line; {@link PcServlet#main} calls it. */
final class PcServletMain {
    static final String USAGE = String.join(System.lineSeparator(),
            "Usage: java -jar gma-pcservlet.jar --domain DOMAIN --registry URL [options]",
            "Runs the PC servlet of a domain until stopped (Ctrl-C): its endpoints open uplinks to it, and it",
            "tunnels their traffic to other domains by HTTP POST.",
            "",
            "  --domain DOMAIN          the domain served, 1..64 of [A-Za-z0-9.-] (required)",
            "  --registry URL           the registry's base URL, such as http://127.0.0.1:8080 (required)",
            "  --host ADDRESS           address both listeners bind (default 127.0.0.1; 0.0.0.0 for all)",
            "  --http-port PORT         HTTP port for other domains' POSTs, 0 for any (default 8081)",
            "  --uplink-port PORT       TCP port for this domain's endpoints, 0 for any (default 8082)",
            "  --url URL                the URL registered for the domain (default http://HOST:HTTP-PORT)",
            "  --via DOMAIN             outbound-only: register no URL, send by POST to DOMAIN's PC servlet",
            "                           and receive by polling it",
            "  --max-queued-bytes N     each destination domain's queue (default 8388608)",
            "  --max-queued-messages N  each destination domain's queue, in messages (default 65536)",
            "  --max-total-bytes N      all domain queues together (default 67108864)",
            "  --max-endpoint-bytes N   each endpoint's queue of messages from other domains (default 8388608)",
            "  --max-batch-bytes N      largest POST body sent or accepted (default 16777216)",
            "  --linger-ms N            how long a batch waits for more messages (default 0: batches form",
            "                           while the previous POST is in flight)",
            "  --drain-seconds N        how long stopping waits for queues to drain (default 5)",
            "  --security DIR           TLS, tokens and rules from DIR, as `gma keys` makes it: store.pass,",
            "                           client-IDENTITY.p12 or server.p12, truststore.p12, domain.keys, rules",
            "  --identity NAME          who this PC servlet is, for tokens and certificates (default: DOMAIN)",
            "  --client-auth MODE       none, want or need a client certificate (default none: tokens)",
            "  --rules FILE             the rules, instead of DIR/rules",
            "  --insecure               plaintext, no authentication (logged at start): needed to listen",
            "                           beyond this machine without --security; the default on loopback",
            "  --help                   this text",
            "",
            "Endpoints of the domain use it with EndpointBuilder.pcServlet(\"HOST:UPLINK-PORT\").",
            "Exit status: 0 after a clean stop, 1 if it cannot start, 2 for bad arguments.");

    private PcServletMain() {
    }

    /** One line per event, no Jetty chatter: only where the user has not set these properties. */
    static void quietLogging() {
        String[][] defaults = {{"org.slf4j.simpleLogger.showDateTime", "true"},
            {"org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS"},
            {"org.slf4j.simpleLogger.showThreadName", "false"},
            {"org.slf4j.simpleLogger.showShortLogName", "true"},
            {"org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn"}};
        for (String[] d : defaults) {
            if (System.getProperty(d[0]) == null) {
                System.setProperty(d[0], d[1]);
            }
        }
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        PcServlet.Builder b;
        try {
            b = parse(args, out);
            if (b == null) {
                return 0;
            }
        } catch (IllegalArgumentException e) {
            err.println("gma-pcservlet: " + e.getMessage());
            err.println("Try --help.");
            return 2;
        }
        PcServlet pc;
        try {
            pc = b.start();
        } catch (Exception e) {
            err.println("gma-pcservlet: cannot start: " + e.getMessage());
            return 1;
        }
        out.println("GMA PC servlet of " + pc.domain() + (b.settings().via() == null ? " at " + pc.url()
                : " (outbound-only, via " + b.settings().via() + ")") + ", uplinks at " + pc.uplink());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                pc.stop();
            } catch (Exception e) {
                err.println("gma-pcservlet: stopping: " + e.getMessage());
            }
            stopped.countDown();
        }, "gma-pcservlet-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** The builder for these arguments, or null when --help was asked for (and printed). */
    static PcServlet.Builder parse(String[] args, PrintStream out) {
        String domain = null;
        String registry = null;
        java.util.List<java.util.function.Consumer<PcServlet.Builder>> options = new java.util.ArrayList<>();
        options.add(b -> b.httpPort(8081).uplinkPort(8082));
        Path security = null;
        String identity = null;
        Path rules = null;
        String clientAuth = null;
        boolean insecure = false;
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            if (option.equals("--help") || option.equals("-h")) {
                out.println(USAGE);
                return null;
            }
            if (option.equals("--insecure")) {
                insecure = true;
                continue;
            }
            if (!USAGE.contains("  " + option + " ")) {
                throw new IllegalArgumentException((option.startsWith("--") ? "unknown option " : "unknown argument ")
                        + option);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args[++i];
            switch (option) {
                case "--domain" -> domain = value;
                case "--registry" -> registry = value;
                case "--host" -> options.add(b -> b.host(value));
                case "--http-port" -> options.add(b -> b.httpPort(number(option, value)));
                case "--uplink-port" -> options.add(b -> b.uplinkPort(number(option, value)));
                case "--url" -> options.add(b -> b.publicUrl(value));
                case "--via" -> options.add(b -> b.via(value));
                case "--max-queued-bytes" -> options.add(b -> b.maxQueuedBytes(number(option, value)));
                case "--max-queued-messages" -> options.add(b -> b.maxQueuedMessages(number(option, value)));
                case "--max-total-bytes" -> options.add(b -> b.maxTotalBytes(number(option, value)));
                case "--max-endpoint-bytes" -> options.add(b -> b.maxEndpointBytes(number(option, value)));
                case "--max-batch-bytes" -> options.add(b -> b.maxBatchBytes(number(option, value)));
                case "--linger-ms" -> options.add(b -> b.linger(Duration.ofMillis(number(option, value))));
                case "--drain-seconds" -> options.add(b -> b.drainTimeout(Duration.ofSeconds(number(option, value))));
                case "--security" -> security = Path.of(value);
                case "--identity" -> identity = value;
                case "--rules" -> rules = Path.of(value);
                case "--client-auth" -> clientAuth = value;
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        if (domain == null || registry == null) {
            throw new IllegalArgumentException("--domain and --registry are required");
        }
        if (insecure && security != null) {
            throw new IllegalArgumentException("--insecure and --security exclude each other");
        }
        if (security == null && rules != null) {
            throw new IllegalArgumentException("--rules needs --security DIR");
        }
        PcServlet.Builder b = PcServlet.builder(domain, registry);
        options.forEach(o -> o.accept(b));
        if (security != null) {
            b.security(Security.fromOptions(security, identity != null ? identity : domain, clientAuth, rules));
        } else if (insecure) {
            b.security(Security.insecure());
        }
        return b;
    }

    private static int number(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + value + " is not a whole number");
        }
    }
}
