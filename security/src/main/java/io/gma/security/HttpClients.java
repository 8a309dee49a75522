package io.gma.security;

import okhttp3.OkHttpClient;

/**
 * OkHttp clients with a {@link Security}, for every HTTP caller (the registry's clients, PC servlets posting to
 * each other): TCP_NODELAY, and with TLS the security's trust and certificate. The server side, a Jetty
 * connector, is the registry module's {@code Https}.
 */
public final class HttpClients {
    private HttpClients() {
    }

    /**
     * Sets up {@code b} for {@code security}: TCP_NODELAY (see {@link NoDelaySocketFactory}) and, with TLS, its
     * trust and its certificate. Host names are verified (OkHttp's default).
     *
     * @return {@code b}
     */
    public static OkHttpClient.Builder configure(OkHttpClient.Builder b, Security security) {
        b.socketFactory(NoDelaySocketFactory.INSTANCE);
        Tls tls = security.tls();
        if (tls != null) {
            b.sslSocketFactory(tls.socketFactory(), tls.trustManager());
        }
        return b;
    }
}
