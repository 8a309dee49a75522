package io.gma.security;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import okhttp3.Connection;
import okhttp3.Credentials;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * An HTTP forward proxy for outgoing HTTP calls, as a corporate firewall has them: https URLs go through it
 * with {@code CONNECT} (TLS stays end to end: the proxy sees host and port, never the bytes), http URLs as
 * requests in absolute form. With credentials, each request carries {@code Proxy-Authorization: Basic} from
 * the start (no 407 round trip per call), and a 407 after that ends the call with the proxy's refusal. Hosts in
 * the no-proxy list are called directly. Immutable.
 *
 * <pre>{@code
 * HttpProxy proxy = HttpProxy.parse("http://proxy.corp.example:3128").credentials("gma", secret)
 *         .noProxy("localhost,.corp.example");
 * OkHttpClient http = proxy.applyTo(new OkHttpClient.Builder()).build();
 * }</pre>
 */
public final class HttpProxy {
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    private final List<String> noProxy;

    private HttpProxy(String host, int port, String user, String password, List<String> noProxy) {
        this.host = host;
        this.port = port;
        this.user = user;
        this.password = password;
        this.noProxy = noProxy;
    }

    /**
     * A proxy at {@code http://host:port}.
     *
     * @throws IllegalArgumentException naming the value: not http, no host or port, credentials or a path in the
     *     URL (credentials go by {@link #credentials}, so that they stay out of command lines)
     */
    public static HttpProxy parse(String url) {
        URI uri;
        try {
            uri = new URI(Objects.requireNonNull(url, "url").trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("proxy URL " + url + " is not a URL: " + e.getReason());
        }
        if (!"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("proxy URL " + url + " is not http://host:port (an HTTP proxy;"
                    + " https destinations go through it by CONNECT)");
        }
        if (uri.getHost() == null || uri.getPort() < 1) {
            throw new IllegalArgumentException("proxy URL " + url + " lacks a host or a port; write"
                    + " http://host:port");
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("proxy URL " + uri.getHost() + ":" + uri.getPort() + " holds"
                    + " credentials; give the user and a password file apart (--proxy-user, --proxy-password-file)");
        }
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/")
                || uri.getRawQuery() != null) {
            throw new IllegalArgumentException("proxy URL " + url + " has a path or query; write http://host:port");
        }
        String host = uri.getHost().startsWith("[") ? uri.getHost().substring(1, uri.getHost().length() - 1)
                : uri.getHost();
        return new HttpProxy(host, uri.getPort(), null, null, List.of());
    }

    /** The same proxy, with Basic credentials. */
    public HttpProxy credentials(String user, String password) {
        if (user == null || user.isEmpty() || user.indexOf(':') >= 0) {
            throw new IllegalArgumentException("proxy user " + user + " is empty or holds ':'");
        }
        return new HttpProxy(host, port, user, Objects.requireNonNull(password, "password"), noProxy);
    }

    /**
     * The same proxy, bypassed for the hosts of {@code list}, comma-separated as NO_PROXY is: {@code *} for all,
     * a name for itself and its subdomains ({@code corp.example} or {@code .corp.example}), an address for
     * itself.
     */
    public HttpProxy noProxy(String list) {
        List<String> hosts = new ArrayList<>();
        for (String h : Objects.requireNonNull(list, "list").split(",")) {
            String t = h.trim().toLowerCase(Locale.ROOT);
            if (t.startsWith("[") && t.endsWith("]")) {
                t = t.substring(1, t.length() - 1);
            }
            if (!t.isEmpty()) {
                hosts.add(t.startsWith(".") ? t.substring(1) : t);
            }
        }
        return new HttpProxy(host, port, user, password, List.copyOf(hosts));
    }

    /** Whether calls to {@code host} go direct. */
    public boolean bypasses(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        for (String n : noProxy) {
            if (n.equals("*") || h.equals(n) || h.endsWith("." + n)) {
                return true;
            }
        }
        return false;
    }

    /** Routes {@code b}'s calls through this proxy (but those to hosts it bypasses), with its credentials. */
    public OkHttpClient.Builder applyTo(OkHttpClient.Builder b) {
        Proxy proxy = new Proxy(Proxy.Type.HTTP, InetSocketAddress.createUnresolved(host, port));
        b.proxySelector(new ProxySelector() {
            @Override
            public List<Proxy> select(URI uri) {
                return List.of(uri.getHost() != null && bypasses(uri.getHost()) ? Proxy.NO_PROXY : proxy);
            }

            @Override
            public void connectFailed(URI uri, SocketAddress address, IOException e) {
                // one proxy, no other to fall back on: the call fails with e, which names the proxy's address
            }
        });
        if (user != null) {
            String basic = Credentials.basic(user, password);
            // CONNECT: OkHttp asks first with a made-up 407 ("OkHttp-Preemptive"); a real one after that is final
            b.proxyAuthenticator((route, response) -> response.request().header("Proxy-Authorization") != null
                    && !"OkHttp-Preemptive".equals(response.header("Proxy-Authenticate")) ? null
                    : response.request().newBuilder().header("Proxy-Authorization", basic).build());
            b.addNetworkInterceptor(new PlainAuthorization(basic)); // requests to http URLs, through the proxy
        }
        return b;
    }

    /** Puts the credentials on each request to an http URL that goes through the proxy. */
    private static final class PlainAuthorization implements Interceptor {
        private final String basic;

        PlainAuthorization(String basic) {
            this.basic = basic;
        }

        @Override
        public Response intercept(Chain chain) throws IOException {
            Request r = chain.request();
            Connection c = chain.connection();
            if (!r.isHttps() && c != null && c.route().proxy().type() == Proxy.Type.HTTP
                    && r.header("Proxy-Authorization") == null) {
                r = r.newBuilder().header("Proxy-Authorization", basic).build();
            }
            return chain.proceed(r);
        }
    }

    /** {@code http://host:port}, with the user when there is one; never the password. */
    @Override
    public String toString() {
        return "http://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port
                + (user != null ? " (user " + user + ")" : "") + (noProxy.isEmpty() ? "" : ", not for " + noProxy);
    }
}
