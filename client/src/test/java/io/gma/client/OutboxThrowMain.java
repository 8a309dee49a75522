package io.gma.client;

import io.gma.wire.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A producer with an outbox in a JVM of its own, for {@link OutboxCrashTest}: its PC servlet is unreachable and
 * its send queue holds 4 messages, so its fifth send throws QUEUE_FULL (policy FAIL); at once it halts, as a
 * {@code kill -9} would end it.
 *
 * <pre>OutboxThrowMain REGISTRY_URL OUTBOX_DIR UNREACHABLE_UPLINK</pre>
 *
 * <p>Output: {@code sent N} for each send that returned, {@code threw N} for the one that threw.
 */
final class OutboxThrowMain {
    private OutboxThrowMain() {
    }

    public static void main(String[] args) throws Exception {
        Producer p = Producer.builder().registry(args[0]).domain("lan").label("thrower").exactLabel(true)
                .outbox(Path.of(args[1])).pcServlet(args[2]).maxQueuedMessages(4)
                .fullQueuePolicy(FullQueuePolicy.FAIL).build();
        for (long n = 0; n < 1000; n++) {
            try {
                p.send("x-aaaaaa@far", ByteBuffer.allocate(8).putLong(n).array());
                System.out.println("sent " + n);
            } catch (EndpointException e) {
                if (e.code() != ErrorCode.QUEUE_FULL) {
                    throw e;
                }
                System.out.println("threw " + n);
                System.out.flush();
                Runtime.getRuntime().halt(3); // nothing runs after: no close, no shutdown hook
            }
        }
        throw new AssertionError("no send threw QUEUE_FULL");
    }
}
