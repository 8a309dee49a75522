package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Answers are taken only from whom they were asked: bob asks asink, and mallory, linked to bob directly with her
 * own good credentials, answers in asink's place with REPLYs and ERRORs for every sequence number bob may be
 * waiting on. None reaches bob's request; asink's own answer does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForgedAnswersTest {
    private final Path keys = TestKeys.main();
    /** Mallory may link to (send to) bob's requester; every endpoint may send to the others. */
    private static final String RULES = "send alice,bob *\nsend mallory breq-*";

    @Test
    void aForgedReplyOrErrorOnADirectLinkIsRefusedAndTheRealAnswerArrives() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            LinkedBlockingQueue<Incoming> asked = new LinkedBlockingQueue<>();
            Security mallory = TestKeys.security(keys, "mallory", RULES);
            RegistryClient registry = RegistryClient.builder(fixture.registryUrl()).security(mallory).build();
            String mal = registry.register(Registration.builder(Kind.PRODUCER, "mal", "lan").port(1).build()).name();
            try (Consumer asink = fixture.consumer("asink").security(TestKeys.security(keys, "alice", RULES))
                    .onMessage(asked::add).build();
                    Producer breq = fixture.producer("breq").security(TestKeys.security(keys, "bob", RULES)).build();
                    SSLSocket s = (SSLSocket) mallory.tls().socketFactory().createSocket("127.0.0.1",
                            registry.lookup(breq.name()).port())) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(Packed.make(0, Command.HELLO, mal, "", mallory.bearer(breq.name())
                        .getBytes(UTF_8)));
                assertEquals(Command.WELCOME, read(s.getInputStream(), 1).get(0).command());

                CompletableFuture<byte[]> first = breq.requestAsync(asink.name(), "first".getBytes(UTF_8));
                Incoming request = asked.poll(10, TimeUnit.SECONDS);
                forge(s, mal, breq, Command.REPLY);
                request.reply("REAL".getBytes(UTF_8));
                assertEquals("REAL", new String(first.get(10, TimeUnit.SECONDS), UTF_8));

                CompletableFuture<byte[]> second = breq.requestAsync(asink.name(), "second".getBytes(UTF_8));
                request = asked.poll(10, TimeUnit.SECONDS);
                forge(s, mal, breq, Command.ERROR);
                request.reply("REAL TOO".getBytes(UTF_8));
                assertEquals("REAL TOO", new String(second.get(10, TimeUnit.SECONDS), UTF_8),
                        "a forged ERROR failed the request");
            }
        }
    }

    /**
     * Sends {@code command} from {@code from} to {@code requester} for sequence numbers 1..32, waits until the
     * requester read them all, and checks it refused the one its request awaits.
     */
    static void forge(SSLSocket s, String from, Endpoint requester, Command command) throws Exception {
        long read = requester.stats().messagesIn();
        long refused = requester.stats().refusedAnswers();
        for (long seq = 1; seq <= 32; seq++) {
            byte[] data = (command == Command.ERROR ? ErrorCode.INTERNAL + " forged" : "FORGED").getBytes(UTF_8);
            s.getOutputStream().write(Packed.make(seq, command, from, requester.name(), data));
        }
        await("the forged answers never all reached the requester").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(1)).until(() -> requester.stats().messagesIn() >= read + 32);
        assertEquals(refused + 1, requester.stats().refusedAnswers(), requester.stats().toString());
    }

    /** Reads until {@code n} messages other than ACK and PING came. */
    private static List<Message> read(InputStream in, int n) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        while (got.size() < n) {
            int r = in.read(buf);
            assertTrue(r > 0, "closed after " + got);
            decoder.feed(buf, 0, r, m -> {
                if (m.command() != Command.ACK && m.command() != Command.PING) {
                    got.add(m);
                }
            });
        }
        return got;
    }
}
