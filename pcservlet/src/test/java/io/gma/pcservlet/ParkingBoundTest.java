package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.DirectFixture;
import io.gma.client.EndpointStats;
import io.gma.client.Producer;
import io.gma.internal.link.LinkCounters;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Threads;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The parking of uplinks past its bound, as a review found it. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ParkingBoundTest {
    /**
     * The parked bound holds 16 messages, and the router frees room for one message every 20 ms. An uplink
     * over the bound keeps its first refused message (the probe) and the bound's worth, and is closed, for its
     * endpoint to send the rest again, only once they were all taken: a handful of reconnects, not one per
     * message (before, with nothing kept, it was closed at once, again and again: 40-56 reconnects, 8 MiB read
     * for 400 KiB).
     */
    @Test
    void anUplinkOverTheParkedBoundIsClosedOnlyOnceThereWasRoom() throws Exception {
        AtomicInteger tokens = new AtomicInteger();
        AtomicInteger routed = new AtomicInteger();
        java.util.List<String> seqs = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        UplinkServer.Upstream router = new UplinkServer.Upstream() {
            @Override
            public UplinkServer.Routed route(Message m, String identity) {
                if (tokens.getAndUpdate(t -> t > 0 ? t - 1 : t) > 0) {
                    routed.incrementAndGet();
                    seqs.add(m.sequence() + "@" + System.nanoTime() / 1000 % 100000000);
                    return UplinkServer.Routed.TAKEN;
                }
                return UplinkServer.Routed.NO_ROOM;
            }

            @Override
            public long undeliverable(byte[] packed, ErrorCode code, String reason) {
                return Spooling.NONE;
            }
        };
        int n = 100;
        try (DirectFixture f = new DirectFixture();
                TestUplinks g = TestUplinks.parkingAtMost("lan", router, 16 * (4096 + 200));
                Producer p = f.producer("p").pcServlet(g.uplink()).build()) {
            // the router's queue frees room for one message every 20 ms, and says so, as the node's queues do
            Thread drain = Threads.start("router-drain", () -> {
                while (!Thread.currentThread().isInterrupted()) {
                    tokens.incrementAndGet();
                    g.room.freed();
                    try {
                        Thread.sleep(20); // a deliberate pause, not a wait: the router must be this slow
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            for (int i = 0; i < n; i++) {
                p.send("sink-aaaaaa@far", new byte[4096]);
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> routed.get() >= n);
            drain.interrupt();
            LinkCounters gs = g.server.counters();
            EndpointStats ps = p.stats();
            long duplicates = seqs.size() - seqs.stream().map(x -> x.substring(0, x.indexOf('@'))).distinct().count();
            assertTrue(routed.get() >= n, "routed " + routed.get());
            assertTrue(ps.reconnects() <= n / 16 + 2, ps.reconnects() + " reconnects, " + gs.bytesIn()
                    + " bytes read for " + n + " messages of 4 KiB");
            assertTrue(duplicates == 0, duplicates + " messages routed twice: an ACK before BYE was lost");
        }
    }
}
