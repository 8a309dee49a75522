package io.gma.registry;

import io.gma.registry.api.RegistryClient;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.security.Tls;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.net.BindException;
import java.net.URI;
import java.security.cert.X509Certificate;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * HTTPS with a {@link Security}, the server side, for the registry and the PC servlets: a Jetty connector that
 * speaks TLS when security has it, and who an HTTP caller is. The client side, OkHttp clients that trust what
 * it trusts and show its certificate, is {@link io.gma.security.HttpClients}.
 */
public final class Https {
    private Https() {
    }

    /** {@code https} when security has TLS, else {@code http}. */
    public static String scheme(Security security) {
        return security.tls() != null ? "https" : "http";
    }

    /**
     * A Jetty server, not started, that listens at {@code host:port} (port 0: any free one) through one
     * {@link #connector} and does not say its version; its threads are named {@code threads-N}, at most
     * {@code maxThreads}. For the registry, the PC servlets and the archivers' listeners.
     *
     * @return its connector; {@code getServer()} is the server, to give a handler and {@link #start}
     */
    public static ServerConnector listener(String threads, int maxThreads, String host, int port, Security security) {
        QueuedThreadPool pool = new QueuedThreadPool(maxThreads, 4);
        pool.setName(threads);
        Server server = new Server(pool);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = connector(server, http, security);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        return connector;
    }

    /** The base URL of a started {@link #listener}: {@code https://[::1]:8443}, {@code http://127.0.0.1:41234}. */
    public static String url(Security security, ServerConnector started) {
        String host = started.getHost();
        return scheme(security) + "://" + (host.contains(":") ? "[" + host + "]" : host) + ":"
                + started.getLocalPort();
    }

    /** A connector of {@code server}: TLS (1.3, 1.2) when security has it, asking for client certificates as set. */
    public static ServerConnector connector(Server server, HttpConfiguration http, Security security) {
        Tls tls = security.tls();
        if (tls == null) {
            return new ServerConnector(server, new HttpConnectionFactory(http));
        }
        SslContextFactory.Server ssl = new SslContextFactory.Server();
        ssl.setSslContext(tls.context());
        ssl.setIncludeProtocols(Tls.protocols());
        ssl.setIncludeCipherSuites(Tls.cipherSuites());
        ssl.setUseCipherSuitesOrder(true);
        ssl.setNeedClientAuth(tls.clientAuth() == Tls.ClientAuth.NEED);
        ssl.setWantClientAuth(tls.clientAuth() == Tls.ClientAuth.WANT);
        HttpConfiguration secure = new HttpConfiguration(http);
        SecureRequestCustomizer customizer = new SecureRequestCustomizer();
        customizer.setSniHostCheck(false); // clients check the host name; an IP address carries no SNI
        secure.addCustomizer(customizer);
        return new ServerConnector(server, new SslConnectionFactory(ssl, HttpVersion.HTTP_1_1.asString()),
                new HttpConnectionFactory(secure));
    }

    /**
     * Starts {@code server}; a port its connector cannot bind fails with a sentence that names the address and
     * {@code portOption}, the setting to change (a bare "Failed to bind to /127.0.0.1:8080" names neither).
     */
    public static void start(Server server, ServerConnector connector, String portOption) throws Exception {
        try {
            server.start();
        } catch (IOException e) {
            if (!(e instanceof BindException) && !(e.getCause() instanceof BindException)) {
                throw e;
            }
            BindException bind = e instanceof BindException b ? b : (BindException) e.getCause();
            throw new IOException("cannot listen on " + connector.getHost() + ":" + connector.getPort() + " ("
                    + bind.getMessage() + "): another process has it; stop that one, or give " + portOption
                    + " another port (0 takes any free one)", e);
        }
    }

    /**
     * Which page of another origin may read a diagnostic or data page of a server that was given the registry
     * URLs {@code registries} (the registry's dashboard reads a PC servlet's status, an archiver's chart data):
     * any ({@code *}) without security; with security only the registry's own dashboard, at the origin of one of
     * those URLs (a page of any other site must not read what this machine is shown).
     *
     * @param origin the request's {@code Origin}, or null
     * @return the value of {@code Access-Control-Allow-Origin}, or null: none
     */
    public static String allowedOrigin(Security security, String registries, String origin) {
        if (!security.authenticates()) {
            return "*";
        }
        for (String url : RegistryClient.baseUrls(registries)) {
            URI registry = URI.create(url);
            int port = registry.getPort();
            boolean usual = port == -1 || port == 443 && registry.getScheme().equals("https")
                    || port == 80 && registry.getScheme().equals("http");
            String own = registry.getScheme() + "://" + registry.getHost() + (usual ? "" : ":" + port);
            if (own.equalsIgnoreCase(origin)) {
                return origin;
            }
        }
        return null;
    }

    /**
     * Who is calling, from the Authorization header or the client certificate only: call it before reading the
     * body.
     *
     * @param audience who is asking ({@link Security#REGISTRY_AUDIENCE}, a PC servlet's domain)
     * @throws AuthException UNAUTHORIZED with the sentence to answer
     */
    public static String caller(HttpServletRequest request, Security security, String audience)
            throws AuthException {
        Object chain = request.getAttribute("jakarta.servlet.request.X509Certificate");
        String cn = chain instanceof X509Certificate[] certs ? Tls.identity(certs) : null;
        return security.authenticate(request.getHeader("Authorization"), cn, audience);
    }
}
