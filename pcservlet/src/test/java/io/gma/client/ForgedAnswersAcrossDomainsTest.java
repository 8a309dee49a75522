package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The case through PC servlets: bob's requesters in east ask asink in west; mallory, in east with an
 * uplink of her own and rules that let her send only to {@code m*@*} and {@code open-*@*}, answers in asink's
 * place with REPLYs and ERRORs for every sequence number they may wait on.
 *
 * <ul>
 *   <li>to breq, whom her rules do not let her send to: east's PC servlet applies the rules to answers too, and
 *       carries none of them;</li>
 *   <li>to open, whom they do: carried, and refused by open itself, which takes an answer only from the endpoint
 *       its request went to.</li>
 * </ul>
 * Neither request is answered by her; each gets asink's own answer.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ForgedAnswersAcrossDomainsTest {
    @TempDir
    static Path keys;

    static final String RULES = """
            register  producer,consumer,mallory   *
            domain    east                        east
            domain    west                        west
            send      producer,consumer,east,west *
            send      mallory                     m*@*,open-*@*
            post      east                        east
            post      west                        west
            query     *                           endpoints,domains
            """;

    @BeforeAll
    static void makeKeys() throws IOException {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("producer", "consumer", "mallory"));
        Keys.addIdentities(keys, List.of("east", "west"));
        Files.writeString(keys.resolve("rules"), RULES);
    }

    private static Security as(String identity) throws IOException {
        return Security.fromDirectory(keys, identity, Tls.ClientAuth.WANT).build();
    }

    @Test
    void forgedAnswersAreNotCarriedWhereTheRulesForbidAndNotTakenWhereTheyAllow() throws Exception {
        LinkedBlockingQueue<Incoming> asked = new LinkedBlockingQueue<>();
        Security mallory = as("mallory");
        try (Registry registry = Registry.builder().port(0).security(as("registry")).build().start();
                PcServer east = PcServer.builder("east", registry.url()).security(as("east")).start();
                PcServer west = PcServer.builder("west", registry.url()).security(as("west")).start();
                Consumer asink = Consumer.builder().registry(registry.url()).domain("west").label("asink")
                        .pcServlet(west.uplink()).security(as("consumer")).onMessage(asked::add).build();
                Producer breq = Producer.builder().registry(registry.url()).domain("east").label("breq")
                        .pcServlet(east.uplink()).security(as("producer")).build();
                Producer open = Producer.builder().registry(registry.url()).domain("east").label("open")
                        .pcServlet(east.uplink()).security(as("producer")).build()) {
            String mal = RegistryClient.builder(registry.url()).security(mallory).build().register(Registration
                    .builder(Kind.PRODUCER, "mal", "east").port(1).build()).name();
            String[] uplink = east.uplink().split(":");
            try (SSLSocket s = (SSLSocket) mallory.tls().socketFactory().createSocket(uplink[0],
                    Integer.parseInt(uplink[1]))) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(Packed.make(0, Command.HELLO, mal, "", mallory.bearer("east")
                        .getBytes(UTF_8)));
                assertEquals(Command.WELCOME, firstReply(s).command());

                CompletableFuture<byte[]> toBreq = breq.requestAsync(asink.name(), "breq asks".getBytes(UTF_8));
                CompletableFuture<byte[]> toOpen = open.requestAsync(asink.name(), "open asks".getBytes(UTF_8));
                Incoming first = asked.poll(10, TimeUnit.SECONDS);
                Incoming second = asked.poll(10, TimeUnit.SECONDS);

                long openRead = open.stats().messagesIn();
                flood(s, mal, breq.name());
                flood(s, mal, open.name());
                // open's 64 arrive after breq's 64 on the same uplink: once open has them all, east has dealt
                // with breq's
                for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                        open.stats().messagesIn() < openRead + 64;) {
                    assertTrue(System.nanoTime() < end, "open never got mallory's answers: " + open.stats());
                    Thread.onSpinWait();
                }
                // had east carried them, breq would have refused the two for its request and dropped 31 REPLYs more
                assertEquals(0, breq.stats().refusedAnswers() + breq.stats().duplicates(), "east carried answers"
                        + " mallory may not send: " + breq.stats());
                assertTrue(!toBreq.isDone() && !toOpen.isDone(), "a request was answered by mallory");
                assertEquals(2, open.stats().refusedAnswers(), "open took, or never saw, the forged REPLY and"
                        + " ERROR to its request: " + open.stats());

                for (Incoming request : List.of(first, second)) {
                    request.reply(("asink answers " + new String(request.data(), UTF_8)).getBytes(UTF_8));
                }
                assertEquals("asink answers breq asks", new String(toBreq.get(10, TimeUnit.SECONDS), UTF_8));
                assertEquals("asink answers open asks", new String(toOpen.get(10, TimeUnit.SECONDS), UTF_8));
            }
        }
    }

    /** REPLY then ERROR from {@code from} to {@code to} for every sequence number 1..32. */
    private static void flood(SSLSocket s, String from, String to) throws IOException {
        for (Command c : new Command[] {Command.REPLY, Command.ERROR}) {
            for (long seq = 1; seq <= 32; seq++) {
                byte[] data = (c == Command.ERROR ? ErrorCode.INTERNAL + " forged" : "FORGED").getBytes(UTF_8);
                s.getOutputStream().write(Packed.make(seq, c, from, to, data));
            }
        }
    }

    /** The first message other than ACK and PING. */
    private static Message firstReply(SSLSocket s) throws IOException {
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        while (got.isEmpty()) {
            int r = s.getInputStream().read(buf);
            assertTrue(r > 0, "closed before any answer");
            decoder.feed(buf, 0, r, m -> {
                if (m.command() != Command.ACK && m.command() != Command.PING) {
                    got.add(m);
                }
            });
        }
        return got.get(0);
    }
}
