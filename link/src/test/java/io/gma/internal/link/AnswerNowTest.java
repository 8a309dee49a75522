package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An ERROR written ahead of the queue ({@link Link#answerNow}, a PC servlet's refusal) is a message the peer
 * counts: the peer's ACKs then count one more than it took of the queue, and the queue must not release a message
 * for it. Before, each such ERROR released one message in flight that the peer had not taken: lost if the link
 * went down then, as it was not written again on the next.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AnswerNowTest {
    private static final int QUEUED = 10;
    private static final int TAKEN = 5;
    private final SendQueue queue = new SendQueue(1 << 20, 1_000, new LinkCounters());
    private final CompletableFuture<Link> serverLink = new CompletableFuture<>();
    private LoopbackLinks links;

    @BeforeEach
    void listen() throws IOException {
        links = new LoopbackLinks("test-answer", Server::new);
    }

    @AfterEach
    void close() throws IOException {
        links.close();
    }

    @Test
    void anErrorWrittenAheadOfTheQueueReleasesNoQueuedMessage() throws Exception {
        Client client = new Client();
        links.connect("client", client);
        Link link = serverLink.get(10, TimeUnit.SECONDS);
        // the refusal first, then the queue's messages behind it: the client takes the ERROR and 5 of them
        link.answerNow(Packed.marshal(Message.error("server", "client", 7, ErrorCode.NO_ROUTE, "nowhere")));
        Envelope envelope = Envelope.of("server", "client");
        for (int i = 1; i <= QUEUED; i++) {
            queue.offerData(new QueuedMessage(queue, i) { }, envelope, Command.DATA, new byte[] {(byte) i},
                    WhenFull.FAIL, 0, "client");
        }
        Peer peer = new Peer("client", queue, envelope);
        peer.attach(link);
        peer.kick(true); // and the client's ACK of what it took, at once

        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (client.got.size() < 1 + QUEUED && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(1 + QUEUED, client.got.size(), "messages that reached the client: " + client.got);
        assertEquals(Command.ERROR, client.got.get(0), "the ERROR went first");
        while (queue.dataAcknowledged() < TAKEN && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Thread.sleep(200); // an ACK that counted the ERROR as one of the queue's would have come by now
        assertEquals(TAKEN, queue.dataAcknowledged(), "queued messages released by the client's ACKs, of the "
                + TAKEN + " it took");
    }

    /** The accepting side: hands over its link. */
    private final class Server extends QuietListener {
        @Override
        public void linkOpened(Link link) {
            serverLink.complete(link);
        }
    }

    /** The connecting side: takes the ERROR and the first {@link #TAKEN} DATA, and holds back the rest. */
    private static final class Client extends QuietListener {
        final List<Command> got = new CopyOnWriteArrayList<>();
        private int data;

        @Override
        public boolean receive(Message m, Link link) {
            got.add(m.command());
            return m.command() == Command.ERROR || ++data <= TAKEN && got.size() == data + 1;
        }
    }
}
