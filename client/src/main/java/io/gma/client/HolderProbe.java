package io.gma.client;

import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * Whether the endpoint that holds a name still answers, at the host and port the registry has for it: what a
 * takeover checks first ({@link EndpointBuilder#takeOver}), so that a second instance never displaces a live
 * one. It connects as any peer would (over TLS when security has it), says HELLO, and reads the first answer:
 * WELCOME, or an ERROR that refuses the link. The accepting side sends either in its own name.
 *
 * <p>Only two findings let a takeover go on: nothing listens there (the connection is refused: the host is up
 * and the port closed, as after a process's crash), or a GMA endpoint of another name answers (the port was
 * reused). Everything else (no answer to the connection within {@link #CONNECT_MILLIS}, no word within
 * {@link #ANSWER_MILLIS}, bytes that are not GMA, a failed TLS handshake) may be the holder alive but slow,
 * overloaded or behind a partition, and stops the takeover: the caller waits for the lease instead.
 */
final class HolderProbe {
    static final int CONNECT_MILLIS = 1_000;
    static final int ANSWER_MILLIS = 2_000;

    /** What was found. */
    enum Verdict {
        /** The holder no longer answers: the name may be taken over. */
        GONE,
        /** The holder answered under the name. */
        ALIVE,
        /** Something is there that may be the holder. */
        UNSURE
    }

    /**
     * @param verdict what it means for a takeover
     * @param detail what was seen, as a clause: "refused the connection: nothing listens there"
     */
    record Result(Verdict verdict, String detail) {
    }

    private HolderProbe() {
    }

    /**
     * Asks who answers at {@code host}:{@code port}.
     *
     * @param name the name the holder registered
     * @param own this endpoint's listening address: the holder's, when it is the same, is this endpoint's now
     */
    static Result probe(String host, int port, String name, Security security, InetSocketAddress own) {
        InetSocketAddress at = new InetSocketAddress(host, port);
        if (at.isUnresolved()) {
            return new Result(Verdict.UNSURE, "has a host name that does not resolve now");
        }
        if (own != null && own.getPort() == port && own.getAddress().equals(at.getAddress())) {
            return new Result(Verdict.GONE, "is this endpoint's own listening address now, which the holder no"
                    + " longer has");
        }
        Socket plain = new Socket();
        try {
            plain.connect(at, CONNECT_MILLIS);
        } catch (ConnectException refused) {
            close(plain);
            return new Result(Verdict.GONE, "refused the connection: nothing listens there");
        } catch (IOException ex) {
            close(plain);
            return new Result(Verdict.UNSURE, "did not take a connection within " + CONNECT_MILLIS + " ms ("
                    + ex.getMessage() + ")");
        }
        try (Socket s = secure(plain, host, port, security)) {
            s.setSoTimeout(ANSWER_MILLIS);
            String credential = security.bearer(name);
            byte[] hello = Packed.make(0, Command.HELLO, "", "", credential == null ? new byte[0]
                    : credential.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().write(hello);
            s.getOutputStream().flush();
            Message answer = firstMessage(s.getInputStream());
            if (answer == null) {
                return new Result(Verdict.UNSURE, "took a connection and closed it without a word");
            }
            if (answer.from().equals(name)) {
                return new Result(Verdict.ALIVE, "answered as " + name);
            }
            return new Result(Verdict.GONE, "is another endpoint's now: it answered as \"" + answer.from() + "\"");
        } catch (SocketTimeoutException slow) {
            return new Result(Verdict.UNSURE, "took a connection but said nothing within " + ANSWER_MILLIS + " ms");
        } catch (ProtocolException notGma) {
            return new Result(Verdict.UNSURE, "answered with bytes that are not GMA (" + notGma.getMessage() + ")");
        } catch (IOException ex) {
            return new Result(Verdict.UNSURE, "took a connection, then failed: " + ex.getMessage());
        }
    }

    /** The connected socket, over TLS when security has it (the certificate must name {@code host}). */
    private static Socket secure(Socket plain, String host, int port, Security security) throws IOException {
        Tls tls = security.tls();
        if (tls == null) {
            return plain;
        }
        SSLSocket s = (SSLSocket) tls.socketFactory().createSocket(plain, host, port, true);
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(Tls.protocols());
        p.setCipherSuites(Tls.cipherSuites());
        p.setEndpointIdentificationAlgorithm("HTTPS");
        s.setSSLParameters(p);
        s.setSoTimeout(ANSWER_MILLIS);
        s.startHandshake();
        return s;
    }

    /** The first message that comes (ACK and PING skipped), or null at the end of the stream. */
    private static Message firstMessage(InputStream in) throws IOException {
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        List<Message> got = new ArrayList<>(1);
        byte[] buffer = new byte[4096];
        for (int n; got.isEmpty() && (n = in.read(buffer)) > 0;) {
            decoder.feed(buffer, 0, n, m -> {
                if (m.command() != Command.ACK && m.command() != Command.PING) {
                    got.add(m);
                }
            });
        }
        return got.isEmpty() ? null : got.get(0);
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // not connected
        }
    }
}
