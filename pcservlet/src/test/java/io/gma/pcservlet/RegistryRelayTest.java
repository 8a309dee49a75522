package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.Authorizer;
import io.gma.registry.Registry;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.HttpClients;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.security.Trust;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /gma/v1/registry/query}, the relay the dashboard served by a PC servlet posts its SQL to. It
 * would run any caller's query under the PC servlet's own identity, so with security on it is off: 403 before
 * the body is read, and the registry sees no query. Without security (loopback only) it answers as ever.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegistryRelayTest {
    private static final MediaType SQL = MediaType.get("text/plain; charset=utf-8");
    private static final String REFUSED = "FORBIDDEN the registry relay is off while security is on: query the"
            + " registry itself, with your own credentials";

    @TempDir
    Path keys;

    /** What the registry was asked to authorize: "identity action target", one a call. */
    private final Queue<String> asked = new ConcurrentLinkedQueue<>();

    private static Response relay(OkHttpClient client, String pcUrl, String authorization, String sql)
            throws IOException {
        Request.Builder b = new Request.Builder().url(pcUrl + TunnelServlet.REGISTRY_QUERY)
                .post(RequestBody.create(sql, SQL));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return client.newCall(b.build()).execute();
    }

    private List<String> queriesAsked() {
        return asked.stream().filter(a -> a.contains(" " + Authorizer.Action.QUERY + " ")).toList();
    }

    @Test
    void withSecurityOnTheRelayIs403AndTheRegistrySeesNoQuery() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("cardiff", "swansea"));
        Files.writeString(keys.resolve("rules"), "domain swansea swansea\n");
        // the registry's real authentication, and an authorizer that allows everything and notes each call
        Authorizer noting = (identity, action, target) -> asked.add(identity + " " + action + " " + target);
        try (Registry registry = Registry.builder().port(0).security(Security.fromDirectory(keys, "registry",
                Tls.ClientAuth.NONE).build()).authorizer(noting).build().start();
                PcServer swansea = PcServer.builder("swansea", registry.url()).security(Security.fromDirectory(keys,
                        "swansea", Tls.ClientAuth.WANT).build()).start()) {
            Security cardiff = Security.fromDirectory(keys, "cardiff", Tls.ClientAuth.NONE).build();
            OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), cardiff)
                    .retryOnConnectionFailure(false).build();
            char[] pass = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
            Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), pass).build();
            OkHttpClient anonymous = HttpClients.configure(new OkHttpClient.Builder(), Security.builder().tls(trustOnly)
                    .trust(Trust.read(keys.resolve("trust"))).build()).retryOnConnectionFailure(false).build();

            // from this machine, with credentials or without: refused
            for (String authorization : new String[] {null, cardiff.bearer("swansea")}) {
                try (Response r = relay(anonymous, swansea.url(), authorization, "SELECT * FROM attributes")) {
                    assertEquals(403, r.code());
                    assertEquals(REFUSED, r.body().string());
                }
            }
            try (Response r = relay(http, swansea.url(), cardiff.bearer("swansea"), "SELECT name FROM endpoints")) {
                assertEquals(403, r.code());
                assertEquals(REFUSED, r.body().string());
            }

            // before the body is read: a 100 MB body is announced and never sent, and the answer comes anyway
            try (SSLSocket s = (SSLSocket) trustOnly.socketFactory().createSocket("127.0.0.1",
                    swansea.httpPort())) {
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write(("POST " + TunnelServlet.REGISTRY_QUERY + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                        + "text/plain\r\nContent-Length: 100000000\r\n\r\nSELECT").getBytes(UTF_8));
                out.flush();
                InputStream in = s.getInputStream();
                assertEquals("HTTP/1.1 403", new String(in.readNBytes(12), UTF_8));
            }
            assertEquals(List.of(), queriesAsked(), "the relay asked the registry nothing: " + asked);

            // the registry itself answers a caller with its own credentials (and the noting authorizer sees it)
            RegistryClient.builder(registry.url()).security(cardiff).build().query("SELECT name FROM endpoints");
            assertEquals(List.of("cardiff QUERY endpoints"), queriesAsked());
        }
    }

    @Test
    void withoutSecurityTheRelayAnswersThisMachinesQuery() throws Exception {
        Authorizer noting = (identity, action, target) -> asked.add(identity + " " + action + " " + target);
        try (Registry registry = Registry.builder().port(0).authorizer(noting).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            Lease sensor = RegistryClient.create(registry.url()).register(Registration.builder(Kind.PRODUCER,
                    "sensor", "east").host("127.0.0.1").port(7000).build());
            OkHttpClient http = new OkHttpClient();
            try (Response r = relay(http, east.url(), null, "SELECT name FROM producers WHERE domain = 'east'")) {
                String body = r.body().string();
                assertEquals(200, r.code(), body);
                assertEquals("{\"columns\":[\"name\"],\"rows\":[[\"" + sensor.name() + "\"]],\"truncated\":false}",
                        body);
            }
            assertEquals(List.of("anonymous QUERY producers"), queriesAsked());
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }
}
