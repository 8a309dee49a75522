package io.gma.examples;

import io.gma.client.EndpointBuilder;
import io.gma.security.Security;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.wire.Command;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The responder of the ping-pong latency test: every REQUEST gets a REPLY with the same bytes, every DATA a
 * DATA with the same bytes back to its sender.
 *
 * <pre>
 * java -cp examples/target/gma-examples.jar io.gma.examples.Pong REGISTRY_URL DOMAIN [EXACT_LABEL] \
 *     [--pc HOST:PORT]
 * </pre>
 *
 * With {@code --pc}, the uplink address of its domain's PC servlet, pings from other domains reach it too.
 */
public final class Pong {
    private Pong() {
    }

    /** Starts a pong endpoint; with {@code exactLabel}, registered as exactly {@code exactLabel@domain}. */
    public static Producer start(String registry, String domain, String exactLabel) throws EndpointException {
        return start(registry, domain, exactLabel, null);
    }

    /** As {@link #start(String, String, String)}, reaching other domains through {@code pcServlet} (may be null). */
    public static Producer start(String registry, String domain, String exactLabel, String pcServlet)
            throws EndpointException {
        return start(registry, domain, exactLabel, pcServlet, Security.insecure());
    }

    /** As {@link #start(String, String, String, String)}, with {@code security} on every hop. */
    public static Producer start(String registry, String domain, String exactLabel, String pcServlet,
            Security security) throws EndpointException {
        EndpointBuilder<Producer> b = Producer.builder().registry(registry).domain(domain).security(security)
                .label(exactLabel != null ? exactLabel : "pong").exactLabel(exactLabel != null);
        if (pcServlet != null) {
            b.pcServlet(pcServlet);
        }
        return start(b);
    }

    /**
     * Starts a pong endpoint from {@code b}, which says its registry, domain, label and anything else (security,
     * uplink, metrics): this sets its handler, and builds it.
     */
    public static Producer start(EndpointBuilder<Producer> b) throws EndpointException {
        Producer[] self = new Producer[1];
        b.onMessage(m -> {
            if (m.replyExpected()) {
                m.reply(m.data());
            } else if (m.command() == Command.DATA) {
                self[0].send(m.from(), m.data());
            }
        });
        self[0] = b.build();
        return self[0];
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        String pc = Ping.option(rest, "--pc");
        if (rest.size() < 2 || rest.size() > 3 || rest.get(0).startsWith("-")) {
            System.err.println("usage: Pong REGISTRY_URL DOMAIN [EXACT_LABEL] [--pc HOST:PORT]");
            System.exit(2);
        }
        try (Producer pong = start(rest.get(0), rest.get(1), rest.size() == 3 ? rest.get(2) : null, pc)) {
            System.out.println("pong is " + pong.name());
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            stop.await();
        } catch (EndpointException | IllegalArgumentException e) {
            System.err.println("pong: " + e.getMessage());
            System.exit(1);
        }
    }
}
