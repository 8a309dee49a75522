package io.gma.client;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A producer with an outbox in a JVM of its own, for {@link OutboxCrashTest} and the PC servlet's tests: it sends
 * one message to a name nobody registered, whose send returns and whose {@link Sent} fails later (NO_ROUTE: from
 * the connector, once the registry has served a lease, for a name of its domain; from its PC servlet, read on the
 * link's event loop, for the PC servlet's own name); the moment it is told, it halts, as a {@code kill -9} would
 * end it. Its label is {@code failer}.
 *
 * <pre>OutboxFailMain REGISTRY_URL OUTBOX_DIR DOMAIN DESTINATION [PC_SERVLET_UPLINK]</pre>
 *
 * <p>Output: {@code sent 0} once the send returned, {@code failed 0 CODE} once it was told.
 */
public final class OutboxFailMain {
    private OutboxFailMain() {
    }

    public static void main(String[] args) throws Exception {
        EndpointBuilder<Producer> b = Producer.builder().registry(args[0]).domain(args[2]).label("failer")
                .exactLabel(true).outbox(Path.of(args[1]));
        Producer p = (args.length > 4 ? b.pcServlet(args[4]) : b).build();
        Sent sent = p.send(args[3], ByteBuffer.allocate(8).putLong(0).array());
        System.out.println("sent 0");
        sent.acknowledged().whenComplete((ok, e) -> {
            System.out.println(e == null ? "acknowledged 0" : "failed 0 " + ((EndpointException) e).code());
            System.out.flush();
            Runtime.getRuntime().halt(3); // nothing runs after: no close, no shutdown hook
        });
        Thread.sleep(Duration.ofSeconds(60).toMillis());
        throw new AssertionError("the send neither failed nor was acknowledged within 60 s");
    }
}
