package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.ChildJvm;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.ErrorCode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer's outbox and its PC servlet's refusal: the PC servlet answers a message addressed to itself with
 * ERROR NO_ROUTE instead of an ACK, which the producer reads on its link's event loop. The producer's sender is
 * told only once the outbox's record is marked done on disk, so a crash the moment it is told does not send the
 * message again on the next start (the sender may have sent it again itself).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OutboxRefusedCrashTest {
    @TempDir
    Path tmp;

    @Test
    void aMessageItsPcServletRefusedIsNotSentAgainAfterACrashTheMomentItsSenderIsTold() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            Path outbox = tmp.resolve("failer");
            String output;
            try (ChildJvm child = ChildJvm.start(List.of("-Xmx128m"), "io.gma.client.OutboxFailMain",
                    List.of(registry.url(), outbox.toString(), "east", "pc@east", east.uplink()))) {
                child.await(Pattern.compile("failed 0 NO_ROUTE"), 30_000);
                await().atMost(Duration.ofSeconds(10)).until(() -> !child.isAlive());
                output = child.output();
            }
            assertTrue(output.contains("sent 0"), output);
            try (Producer again = Producer.builder().registry(registry.url()).domain("east").label("failer")
                    .exactLabel(true).outbox(outbox).pcServlet(east.uplink()).build()) {
                assertEquals(0, again.stats().outboxRecovered(), "the outbox kept the message its sender was told"
                        + " had failed");
            }
        }
    }

    /**
     * Two thousand refusals read on one event loop: every sender is told, the outbox keeps none of them, and the
     * marks are waited for by one thread, not one each (the endpoint's threads grow by a handful at most).
     */
    @Test
    void manyRefusalsAreEachToldAndNoneIsKept() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start();
                Producer p = Producer.builder().registry(registry.url()).domain("east").label("many").exactLabel(true)
                        .outbox(tmp.resolve("many")).pcServlet(east.uplink()).build()) {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            p.send("pc@east", new byte[8]).acknowledged().handle((ok, e) -> e).get(30, TimeUnit.SECONDS);
            int before = threads.getThreadCount();
            threads.resetPeakThreadCount();
            List<CompletableFuture<Void>> told = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                told.add(p.send("pc@east", new byte[8]).acknowledged());
            }
            for (CompletableFuture<Void> f : told) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
                assertEquals(ErrorCode.NO_ROUTE, ((EndpointException) e.getCause()).code());
            }
            assertTrue(threads.getPeakThreadCount() - before <= 8, "threads grew from " + before + " to "
                    + threads.getPeakThreadCount());
            await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().outboxMessages() == 0);
        }
    }
}
