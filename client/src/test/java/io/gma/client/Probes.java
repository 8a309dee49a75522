package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;

/**
 * What the security tests ask of a listener, endpoint or PC servlet alike: a send that must be refused, a HELLO
 * under another's name. Public for the PC servlet's tests, in this module's test jar.
 */
public final class Probes {
    /**
     * Rules of the tests of names: the registry lets bob register the exact label x-abc234, and mallory only x,
     * as issue 18's case.
     */
    public static final String NAME_RULES = "send * *\nregister bob x-abc234@east,x-abc234@lan\n"
            + "register mallory x@east,x@lan\nregister alice,victim *";

    private Probes() {
    }

    /**
     * The send to {@code to} fails with {@code code} and {@code sentence}: through its future, or at once when the
     * refusal came first and closed the queue (an uplink is connected when its endpoint starts, so a PC servlet
     * may refuse it before the first send).
     */
    public static EndpointException refused(Producer p, String to, ErrorCode code, String sentence)
            throws Exception {
        EndpointException why;
        try {
            Sent sent = p.send(to, "must not arrive".getBytes(UTF_8));
            ExecutionException e = assertThrows(ExecutionException.class, () -> sent.acknowledged().get(15,
                    TimeUnit.SECONDS));
            why = (EndpointException) e.getCause();
        } catch (EndpointException atOnce) {
            why = atOnce;
        }
        assertEquals(code, why.code(), why.getMessage());
        assertTrue(why.getMessage().contains(sentence), why.getMessage());
        return why;
    }

    /**
     * HELLO as {@code name} with {@code security}'s token for {@code audience}, then a DATA from it, on a raw TLS
     * connection; what came back until the peer closed or was silent.
     */
    public static List<Message> hello(Security security, int port, String name, String audience, String to)
            throws Exception {
        return exchange(security, port, name, audience, to, Integer.MAX_VALUE);
    }

    /**
     * HELLO as {@code name} with {@code security}'s token for {@code audience}, and nothing after it, on a raw TLS
     * connection; the first answer (WELCOME: let in), without waiting for more.
     */
    public static Message helloAnswer(Security security, int port, String name, String audience) throws Exception {
        List<Message> got = exchange(security, port, name, audience, null, 1);
        assertTrue(!got.isEmpty(), "HELLO as " + name + " was not answered");
        return got.get(0);
    }

    /** HELLO, then a DATA to {@code to} unless null; at most {@code most} of what came back. */
    private static List<Message> exchange(Security security, int port, String name, String audience, String to,
            int most) throws Exception {
        try (SSLSocket s = (SSLSocket) security.tls().socketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(3000);
            s.getOutputStream().write(Packed.make(0, Command.HELLO, name, "", security.bearer(audience)
                    .getBytes(UTF_8)));
            if (to != null) {
                s.getOutputStream().write(Packed.make(7, Command.DATA, name, to, "as another".getBytes(UTF_8)));
            }
            return read(s.getInputStream(), most);
        }
    }

    /** Registers {@code label} exactly in {@code domain} as {@code security}'s identity; the name. */
    public static String registerExactly(String registryUrl, Security security, String label, String domain)
            throws Exception {
        return RegistryClient.builder(registryUrl).security(security).build().register(Registration.builder(
                Kind.CONSUMER, label, domain).exact(true).port(1).build()).name();
    }

    /** What {@link #hello} got is the refusal {@code sentence}, and nothing was let in. */
    public static void refusedAsAnother(List<Message> got, String sentence) {
        assertTrue(got.stream().noneMatch(m -> m.command() == Command.WELCOME || m.command() == Command.DATA),
                "a name of another identity was let in: " + got);
        assertEquals(Command.ERROR, got.get(0).command(), "HELLO as another's name was answered " + got);
        assertEquals(sentence, got.get(0).dataAsString());
    }

    /**
     * What comes until the peer closes, is silent for the socket's timeout, or has sent {@code most} messages (ACK
     * and PING skipped).
     */
    private static List<Message> read(InputStream in, int most) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        try {
            for (int r; got.size() < most && (r = in.read(buf)) > 0;) {
                decoder.feed(buf, 0, r, m -> {
                    if (m.command() != Command.ACK && m.command() != Command.PING) {
                        got.add(m);
                    }
                });
            }
        } catch (SocketTimeoutException | javax.net.ssl.SSLException | java.net.SocketException quiet) {
            // what came is all (a reset: the peer closed before it read all we sent)
        }
        return got;
    }
}
