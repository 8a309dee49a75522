package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.gma.client.DirectFixture;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A PC servlet with {@code maxLinks} uplinks open refuses the next with ERROR QUEUE_FULL, and its other uplinks
 * keep flowing; the refused endpoint gets in once one closes (issue 22, "Limits are explicit").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkLimitTest {
    private static final String REFUSAL = "QUEUE_FULL pc@east has 2 links open, its most (maxLinks 2): try again"
            + " later";
    private final RecordingUpstream router = new RecordingUpstream();

    @Test
    void theUplinkPastMaxLinksIsRefusedQueueFullAndTheOthersKeepFlowing() throws Exception {
        try (DirectFixture f = new DirectFixture(); TestUplinks g = TestUplinks.withMaxLinks("east", router, 2);
                Producer a = f.producer("a").domain("east").pcServlet(g.uplink()).build();
                Producer b = f.producer("b").domain("east").pcServlet(g.uplink()).build()) {
            flows(a);
            flows(b);
            try (Socket s = new Socket("127.0.0.1", g.port())) {
                s.getOutputStream().write(Packed.make(0, Command.HELLO, "c-cccccc@east", "", new byte[0]));
                List<Message> answer = readUntilClosed(s.getInputStream());
                assertEquals(1, answer.size(), answer.toString());
                assertEquals(Command.ERROR, answer.get(0).command());
                assertEquals(REFUSAL, answer.get(0).dataAsString());
            }
            flows(a);
            flows(b);
            assertEquals(1, g.server.counters().linksOverLimit());

            // an endpoint refused so keeps its message, tries again after its back-off, and gets in once a goes
            try (Producer c = f.producer("c").domain("east").pcServlet(g.uplink()).build()) {
                Sent waiting = c.send("sink-aaaaaa@west", "from c".getBytes(StandardCharsets.UTF_8));
                flows(b);
                assertFalse(waiting.acknowledged().isDone(), "c's uplink is past the limit: nothing to acknowledge");
                a.close();
                waiting.acknowledged().get(15, TimeUnit.SECONDS);
                Message m = routedFrom(c.name());
                assertEquals("from c", m.dataAsString());
                flows(b);
            }
        }
    }

    /** {@code p} sends a message to another domain over its uplink: acknowledged, and routed. */
    private void flows(Producer p) throws Exception {
        byte[] data = ("from " + p.name()).getBytes(StandardCharsets.UTF_8);
        p.send("sink-aaaaaa@west", data).acknowledged().get(15, TimeUnit.SECONDS);
        assertEquals("from " + p.name(), routedFrom(p.name()).dataAsString());
    }

    /** The next message routed from {@code sender}, skipping others'. */
    private Message routedFrom(String sender) throws InterruptedException {
        for (Message m; (m = router.routed.poll(15, TimeUnit.SECONDS)) != null;) {
            if (m.from().equals(sender)) {
                return m;
            }
        }
        throw new AssertionError("nothing routed from " + sender);
    }

    private static List<Message> readUntilClosed(InputStream in) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder d = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[4096];
        for (int n; (n = in.read(buf)) > 0;) {
            d.feed(buf, 0, n, got::add);
        }
        return got;
    }
}
