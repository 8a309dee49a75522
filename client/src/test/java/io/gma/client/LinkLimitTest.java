package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import java.net.InetAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An endpoint with {@code maxLinks} links open refuses the next peer's with ERROR QUEUE_FULL at HELLO; its other
 * links keep flowing, and the refused peer, which keeps its messages, gets in once one closes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LinkLimitTest {

    @Test
    void thePeerPastMaxLinksIsRefusedQueueFullAndTheOthersKeepFlowing() throws Exception {
        LinkedBlockingQueue<String> inbox = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").maxLinks(1).onMessage(m -> inbox.add(new String(m.data(), UTF_8)))
                        .build();
                Producer first = f.producer("first").build();
                Producer second = f.producer("second").build()) {
            flows(first, sink, inbox);
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), f.portOf(sink.name()))) {
                s.getOutputStream().write(Packed.make(0, Command.HELLO, "raw-aaaaaa@lan", "", new byte[0]));
                List<Message> got = MisbehavingPeerTest.readUntilClosed(s, 5000);
                assertEquals(1, got.size(), "an ERROR, then the end of the stream: " + got);
                assertEquals(Command.ERROR, got.get(0).command());
                assertEquals("QUEUE_FULL " + sink.name() + " has 1 links open, its most (maxLinks 1): try again later",
                        got.get(0).dataAsString());
            }
            Sent waiting = second.send(sink.name(), "from second".getBytes(UTF_8));
            flows(first, sink, inbox);
            assertFalse(waiting.acknowledged().isDone(), "second's link is past the limit: nothing acknowledged");
            assertEquals(0, second.stats().rejected(), "refused for now, not failed: " + second.stats());
            first.close();
            waiting.acknowledged().get(15, TimeUnit.SECONDS);
            assertEquals("from second", inbox.poll(10, TimeUnit.SECONDS));
            assertTrue(sink.stats().linksOverLimit() >= 2, "counted: " + sink.stats());
        }
    }

    @Test
    void maxLinksOutsideItsRangeIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Consumer.builder().maxLinks(0));
        assertEquals("maxLinks 0 is outside 1..1000000 (default 10000)", e.getMessage());
    }

    /** {@code p} sends to {@code sink}: acknowledged, and delivered. */
    private static void flows(Producer p, Consumer sink, LinkedBlockingQueue<String> inbox) throws Exception {
        String text = "from " + p.name() + " " + System.nanoTime();
        p.send(sink.name(), text.getBytes(UTF_8)).acknowledged().get(15, TimeUnit.SECONDS);
        assertEquals(text, inbox.poll(10, TimeUnit.SECONDS));
    }
}
