package io.gma.registry.api;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import okhttp3.HttpUrl;

/**
 * Why a call to the registry got no answer, in a sentence that says what to do: the transport's own words
 * ({@code PKIX path building failed}, {@code unexpected end of stream}) name no cause a person can act on.
 */
final class Unreachable {
    /** How long the probe of a plaintext call that ended at once waits for the server's first byte. */
    private static final int PROBE_MILLIS = 2000;

    private Unreachable() {
    }

    /** The reason {@code failure} of a call to {@code url} means, and what to do about it. */
    static String reason(HttpUrl url, IOException failure) {
        String base = url.scheme() + "://" + hostPort(url);
        if (causedBy(failure, CertPathBuilderException.class) || causedBy(failure, CertPathValidatorException.class)
                || messageHas(failure, "PKIX path")) {
            return base + " presents a certificate this side does not trust (" + failure.getMessage() + "): give"
                    + " it the registry's trust, the truststore.p12 of the directory gma keys made (--security DIR,"
                    + " Security.fromDirectory)";
        }
        if (causedBy(failure, SSLPeerUnverifiedException.class) || messageHas(failure, "subject alternative")) {
            return base + " presents a certificate that does not name " + url.host() + " (" + failure.getMessage()
                    + "): use the host name its certificate was made for (gma keys --host)";
        }
        if (url.isHttps() && causedBy(failure, SSLException.class) && messageHas(failure, "Unsupported or"
                + " unrecognized SSL message")) {
            return base + " answers in plaintext, not TLS: use http://" + hostPort(url) + ", or start the registry"
                    + " with --security DIR";
        }
        if (causedBy(failure, ConnectException.class)) {
            return "nothing listens at " + hostPort(url) + " (" + failure.getMessage() + "): is the registry"
                    + " running (gma registry), and is this its --port?";
        }
        if (causedBy(failure, SocketTimeoutException.class)) {
            return base + " accepted the connection but did not answer in time (" + failure.getMessage() + ")";
        }
        if (!url.isHttps() && (messageHas(failure, "unexpected end of stream") || causedBy(failure,
                EOFException.class)) && !causedBy(failure, InterruptedIOException.class) && speaksTls(url)) {
            return base + " speaks TLS: use https://" + hostPort(url) + ", with the trust of --security DIR";
        }
        return failure.getMessage();
    }

    /**
     * Whether the server at a plaintext URL answers a request with a TLS record (an alert: 0x15, or a handshake:
     * 0x16, then version 3.x), as a TLS port does to plaintext. Asked only after a call failed.
     */
    static boolean speaksTls(HttpUrl url) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(url.host(), url.port()), PROBE_MILLIS);
            s.setSoTimeout(PROBE_MILLIS);
            OutputStream out = s.getOutputStream();
            out.write(("GET / HTTP/1.1\r\nHost: " + url.host() + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            int type = in.read();
            int major = in.read();
            return (type == 0x15 || type == 0x16) && major == 3;
        } catch (IOException unreachable) {
            return false;
        }
    }

    private static String hostPort(HttpUrl url) {
        String host = url.host().contains(":") ? "[" + url.host() + "]" : url.host();
        return host + ":" + url.port();
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean messageHas(Throwable t, String part) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c.getMessage() != null && c.getMessage().contains(part)) {
                return true;
            }
        }
        return false;
    }
}
