package io.gma.client;

import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link OutboxCrashTest} across domains: the producer with an outbox is in domain east, behind east's PC servlet,
 * and the consumer in west, behind west's; the first hop, whose ACK empties the outbox, is east's PC servlet. The
 * producer is killed with SIGKILL mid-stream and started again with the same outbox and exact name: of every number
 * whose send returned, none is lost and none arrives twice (the consumer's dedup drops what comes again through
 * both PC servlets).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class OutboxAcrossDomainsCrashTest {
    @TempDir
    Path tmp;

    @Test
    void aProducerKilledMidStreamLosesAndDuplicatesNothingAcrossDomains() throws Exception {
        OutboxCrashTest.Tally got = new OutboxCrashTest.Tally();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start();
                PcServer west = PcServer.builder("west", registry.url()).start();
                Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("tally").exactLabel(true).onMessage(m -> got.add(ByteBuffer.wrap(m.data()).getLong()))
                        .build()) {
            String summary = OutboxCrashTest.killAndCount(registry.url(), tmp.resolve("outbox"), "streamer@east", sink,
                    got, 2, List.of(east.uplink(), "east"));
            System.out.println("OutboxCrashTest, across domains: " + summary);
        }
    }
}
