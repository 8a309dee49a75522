package io.gma.pcservlet;

import io.gma.security.HttpClients;
import io.gma.security.HttpProxy;
import io.gma.security.Security;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The PC servlet's calls to other PC servlets over the HTTP tunnel: a {@link Forwarder}'s POSTs and a
 * {@link Poller}'s long polls, on one OkHttp client (TCP_NODELAY, the PC servlet's TLS trust and certificate),
 * each with the PC servlet's credentials for the domain it calls, through its HTTP proxy if it has one. The
 * credentials never go to a URL that is not https while security is on: such a call is refused before anything
 * is sent.
 */
final class TunnelClient {
    private final String domain;
    private final Security security;
    private final OkHttpClient http;

    /** @param proxy the HTTP proxy calls go through, or null: direct */
    TunnelClient(String domain, Security security, HttpProxy proxy) {
        this.domain = domain;
        this.security = security;
        Dispatcher dispatcher = new Dispatcher();
        dispatcher.setMaxRequestsPerHost(StreamOrder.MAX_WINDOW); // a forwarder's POSTs in flight
        OkHttpClient.Builder b = new OkHttpClient.Builder();
        if (proxy != null) {
            proxy.applyTo(b);
        }
        this.http = HttpClients.configure(b, security).dispatcher(dispatcher)
                .connectionPool(new ConnectionPool(StreamOrder.MAX_WINDOW + 4, 1, TimeUnit.MINUTES))
                .connectTimeout(Duration.ofSeconds(5)).readTimeout(Duration.ofSeconds(90))
                .writeTimeout(Duration.ofSeconds(30)).build();
    }

    /**
     * A POST of a batch to domain {@code to}'s PC servlet at {@code baseUrl}, numbered {@code stream}
     * ({@link Tunnel#STREAM_HEADER}), its body encoded as {@code contentEncoding} says (null: plain), not sent
     * yet: {@link Call#enqueue} or {@link Call#execute} sends it; the caller closes the response.
     *
     * @throws IllegalArgumentException when security is on and the URL is not https, or {@link BadUrl} when it
     *     is not a URL OkHttp can parse (nothing is sent; the sentence names the URL)
     */
    Call postCall(String to, String baseUrl, RequestBody batch, String stream, String contentEncoding) {
        Request.Builder b = authorized(to, baseUrl).url(messages(to, baseUrl)).header(Tunnel.STREAM_HEADER, stream);
        if (contentEncoding != null) {
            b.header(Compression.CONTENT_ENCODING, contentEncoding);
        }
        return http.newCall(b.post(batch).build());
    }

    /** A domain's URL that OkHttp cannot parse (the registry refuses most such URLs at registration). */
    static final class BadUrl extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadUrl(String sentence) {
            super(sentence);
        }
    }

    /** Domain {@code to}'s messages URL under {@code baseUrl}; {@link BadUrl} naming it when OkHttp cannot parse it. */
    private static HttpUrl messages(String to, String baseUrl) {
        try {
            return HttpUrl.get(baseUrl + Tunnel.MESSAGES_PATH);
        } catch (IllegalArgumentException unparsed) {
            throw new BadUrl("domain " + to + "'s URL " + baseUrl + " is not a URL OkHttp can parse: "
                    + unparsed.getMessage());
        }
    }

    /** A POST of a batch, answered within {@code timeout}; the caller closes the response. */
    Response post(String to, String baseUrl, RequestBody batch, Duration timeout) throws IOException {
        okhttp3.Call call = http.newCall(authorized(to, baseUrl).url(messages(to, baseUrl)).post(batch)
                .build());
        call.timeout().timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return call.execute();
    }

    /**
     * A long poll of the via domain {@code via} at {@code baseUrl}, acknowledging batch {@code ack} (empty:
     * none), saying it reads zstd when {@code zstd} (else OkHttp's own gzip, which it decompresses itself, is
     * what it says); the caller closes the response.
     *
     * @throws IllegalArgumentException as {@link #post}
     */
    Response poll(String via, String baseUrl, int waitSeconds, String ack, boolean zstd, long maxBatchBytes)
            throws IOException {
        Request.Builder b = authorized(via, baseUrl); // security's refusal first, as a POST's
        b.url(messages(via, baseUrl).newBuilder().addQueryParameter("domain", domain)
                .addQueryParameter("wait", Integer.toString(waitSeconds)).addQueryParameter("ack", ack)
                .addQueryParameter("max", Long.toString(maxBatchBytes)).build());
        if (zstd) {
            b.header(Compression.ACCEPT_ENCODING, Compression.ZSTD);
        }
        return http.newCall(b.get().build()).execute();
    }

    /** A request from this domain with its credentials for {@code audience}, to a URL that may carry them. */
    private Request.Builder authorized(String audience, String url) {
        security.requireSecureUrl(url, "domain " + audience + "'s URL");
        Request.Builder b = new Request.Builder().header(Tunnel.DOMAIN_HEADER, domain);
        String bearer = security.bearer(audience);
        return bearer == null ? b : b.header("Authorization", bearer);
    }

    /** Ends the client's threads and connections. */
    void close() {
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }
}
