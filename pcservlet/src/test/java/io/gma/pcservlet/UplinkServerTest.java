package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.client.DirectFixture;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The uplink side of a PC servlet, alone: who may open an uplink, and all-or-nothing delivery. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkServerTest {
    private final RecordingUpstream router = new RecordingUpstream();
    private final LinkedBlockingQueue<Message> routed = router.routed;
    private final LinkedBlockingQueue<String> lost = router.lost;

    @Test
    void anEndpointOfAnotherDomainIsRefusedWithForbidden() throws Exception {
        try (TestUplinks g = TestUplinks.start("east", router);
                Socket s = new Socket("127.0.0.1", g.port())) {
            s.getOutputStream().write(Packed.make(0, Command.HELLO, "spy-aaaaaa@west", "", new byte[0]));
            List<Message> answer = readAll(s.getInputStream());
            assertEquals(1, answer.size(), answer.toString());
            assertEquals(Command.ERROR, answer.get(0).command());
            assertEquals("FORBIDDEN pc@east takes uplinks from endpoints of domain east only, not"
                    + " \"spy-aaaaaa@west\"", answer.get(0).dataAsString());
        }
    }

    @Test
    void anEndpointPointedAtAnotherDomainsPcServletFailsItsMessagesWithForbidden() throws Exception {
        try (DirectFixture f = new DirectFixture(); TestUplinks g = TestUplinks.start("east", router);
                Producer p = f.producer("lost").pcServlet(g.uplink()).build()) {
            ErrorCode first;
            try {
                p.send("x-aaaaaa@north", new byte[1]).acknowledged().get(10, TimeUnit.SECONDS);
                first = null;
            } catch (EndpointException refusedAlready) {
                first = refusedAlready.code();
            } catch (java.util.concurrent.ExecutionException failedLater) {
                first = ((EndpointException) failedLater.getCause()).code();
            }
            assertEquals(ErrorCode.FORBIDDEN, first);
            EndpointException again = org.junit.jupiter.api.Assertions.assertThrows(EndpointException.class,
                    () -> p.send("x-aaaaaa@north", new byte[1]));
            assertEquals(ErrorCode.FORBIDDEN, again.code(), "not retried for ever: " + again.getMessage());
        }
    }

    @Test
    void anEndpointOfItsDomainIsWelcomedAndWhatItSendsIsRouted() throws Exception {
        try (TestUplinks g = TestUplinks.start("east", router);
                Socket s = new Socket("127.0.0.1", g.port())) {
            s.getOutputStream().write(Packed.make(0, Command.HELLO, "cpu-aaaaaa@east", "", new byte[0]));
            s.getOutputStream().write(Packed.make(1, Command.DATA, "cpu-aaaaaa@east", "sink-bbbbbb@west",
                    new byte[] {7}));
            Message m = routed.poll(10, TimeUnit.SECONDS);
            assertEquals("sink-bbbbbb@west", m.to());
            assertEquals(1, m.sequence());
        }
    }

    @Test
    void deliveryIsAllOrNothingAndFailsToTheRouterWhenDropped() throws Exception {
        try (TestUplinks g = TestUplinks.start("east", router, 1024)) {
            Message small = Message.of(Command.DATA, "src-aaaaaa@west", "a-cccccc@east", 1, new byte[100]);
            Message big = Message.of(Command.DATA, "src-aaaaaa@west", "b-dddddd@east", 2, new byte[2000]);
            assertEquals(Placement.PLACED, g.deliverAll(List.of(small, big)), "empty queues take any batch");
            Message more = Message.of(Command.DATA, "src-aaaaaa@west", "b-dddddd@east", 3, new byte[10]);
            Message other = Message.of(Command.DATA, "src-aaaaaa@west", "a-cccccc@east", 4, new byte[10]);
            assertEquals(new Placement.NoRoom("the queue for b-dddddd@east holds 1 messages, 2048 bytes (limits 65536,"
                    + " 1024); 1 more, 58 bytes, came"), g.deliverAll(List.of(other, more)),
                    "b's queue is over its bound");
            assertEquals(1, g.local.queues().stream().filter(q -> q.endpoint().equals("a-cccccc@east"))
                    .mapToLong(LocalQueues.QueueInfo::messages).sum(), "nothing of a refused batch is queued");
            g.local.drop("b-dddddd@east", ErrorCode.NO_ROUTE, "gone", router);
            assertEquals("b-dddddd@east NO_ROUTE", lost.poll(5, TimeUnit.SECONDS));
        }
    }

    private static List<Message> readAll(InputStream in) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder d = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[4096];
        for (int n; (n = in.read(buf)) > 0;) {
            d.feed(buf, 0, n, got::add);
        }
        return got;
    }
}
