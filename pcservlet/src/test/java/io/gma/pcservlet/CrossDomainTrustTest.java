package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import io.gma.security.AlteredTokens;
import io.gma.security.HttpClients;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trust without a shared secret, between real PC servlets and a registry: west holds its own private key and
 * everybody's public keys. It cannot make a token that east's PC servlet or the registry takes for an identity
 * of east, a token shown to west cannot be replayed at north, nor anywhere once it expired, and a token altered
 * in any part is refused without a word on which.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CrossDomainTrustTest {
    @TempDir
    static Path keys;
    private static Registry registry;
    private static PcServer east;
    private static PcServer west;
    private static PcServer north;
    private static OkHttpClient http;

    @BeforeAll
    static void start() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice"));
        Keys.addIdentities(keys, List.of("east", "west", "north"));
        Files.writeString(keys.resolve("rules"), """
                domain  east,west,north  *
                post    alice,east       east
                query   *                domains
                send    *                *
                """);
        registry = Registry.builder().port(0).security(as("registry")).build().start();
        east = PcServer.builder("east", registry.url()).registryGrace(Duration.ZERO).security(as("east")).start();
        west = PcServer.builder("west", registry.url()).registryGrace(Duration.ZERO).security(as("west")).start();
        north = PcServer.builder("north", registry.url()).registryGrace(Duration.ZERO).security(as("north")).start();
        char[] pass = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
        Security trustOnly = Security.builder().tls(Tls.builder().trustStore(keys.resolve("truststore.p12"), pass)
                .build()).token(() -> null).build();
        http = HttpClients.configure(new OkHttpClient.Builder(), trustOnly).retryOnConnectionFailure(false).build();
    }

    @AfterAll
    static void stop() throws Exception {
        north.stop();
        west.stop();
        east.stop();
        registry.close();
    }

    private static Security as(String identity) throws IOException {
        return Security.fromDirectory(keys, identity, Tls.ClientAuth.NONE).build();
    }

    private static SigningKey key(String identity) throws IOException {
        return SigningKey.read(keys.resolve(identity + ".key"));
    }

    /** The status and body of a POST of one message to {@code pc} as domain east, showing {@code token}. */
    private static String post(PcServer pc, String token) throws IOException {
        try (Response answer = http.newCall(postOf(pc, token)).execute()) {
            return answer.code() + " " + (answer.code() == 200 ? "" : answer.body().string());
        }
    }

    /** All a caller learns from {@link #post}: the status, the WWW-Authenticate header and the body. */
    private static String postAnswer(PcServer pc, String token) throws IOException {
        try (Response answer = http.newCall(postOf(pc, token)).execute()) {
            return answer.code() + " " + answer.header("WWW-Authenticate", "-") + " " + answer.body().string();
        }
    }

    private static Request postOf(PcServer pc, String token) {
        byte[] batch = Packed.make(1, Command.DATA, "src@east", "nobody@" + pc.url().hashCode(), new byte[1]);
        return new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH).header(Tunnel.DOMAIN_HEADER, "east")
                .header("Authorization", "Bearer " + token)
                .post(RequestBody.create(batch, MediaType.get("application/x-gma"))).build();
    }

    /** The status and body of a registry query showing {@code token}. */
    private static String query(String token) throws IOException {
        Request r = new Request.Builder().url(registry.url() + Registry.API_PATH + "/query?sql=SELECT%20domain%20"
                + "FROM%20domains").header("Authorization", "Bearer " + token).build();
        try (Response answer = http.newCall(r).execute()) {
            return answer.code() + " " + (answer.code() == 200 ? "" : answer.body().string());
        }
    }

    private static Instant inAnHour() {
        return Instant.now().plusSeconds(3600);
    }

    @Test
    void goodTokensAreTakenByTheirAudience() throws Exception {
        assertEquals("200 ", post(east, SignedTokens.issue(key("alice"), "alice", "east", inAnHour())));
        assertEquals("200 ", post(east, SignedTokens.issue(key("east"), "east", "east", inAnHour())));
        assertEquals("200 ", query(SignedTokens.issue(key("alice"), "alice", "registry", inAnHour())));
    }

    @Test
    void westsKeysCannotMakeATokenForAnIdentityOfEast() throws Exception {
        SigningKey westKey = key("west");
        for (String victim : new String[] {"east", "alice"}) {
            assertEquals("401 UNAUTHORIZED token refused (FOREIGN_SUBJECT): issuer \"west\" is not trusted to vouch"
                    + " for \"" + victim + "\"", post(east, SignedTokens.issue(westKey, victim, "east", inAnHour())));
            assertEquals("401 {\"error\":\"UNAUTHORIZED\",\"message\":\"token refused (FOREIGN_SUBJECT): issuer"
                    + " \\\"west\\\" is not trusted to vouch for \\\"" + victim + "\\\"\"}",
                    query(SignedTokens.issue(westKey, victim, "registry", inAnHour())));
        }
        // nor by naming east as the issuer: the signature is west's, and east's public key does not verify it
        SigningKey posing = SigningKey.generate("east", "k1");
        assertEquals("401 UNAUTHORIZED token refused: it is not a valid token of a trusted issuer",
                post(east, SignedTokens.issue(posing, "east", "east", inAnHour())));
    }

    @Test
    void aTokenCapturedAtWestIsRefusedAtNorthAndAtTheRegistryAndAfterItsExpiryEverywhere() throws Exception {
        String atWest = SignedTokens.issue(key("alice"), "alice", "west", inAnHour());
        assertEquals("200 ", post(west, atWest), "west takes it");
        assertEquals("401 UNAUTHORIZED token refused (WRONG_AUDIENCE): the token is for \"west\", not for"
                + " \"north\"", post(north, atWest));
        assertEquals("401 UNAUTHORIZED token refused (WRONG_AUDIENCE): the token is for \"west\", not for"
                + " \"east\"", post(east, atWest));
        assertEquals(401, Integer.parseInt(query(atWest).substring(0, 3)));

        Instant expired = Instant.now().minusSeconds(61); // past the 60 s of clock skew allowed
        String old = SignedTokens.issue(key("alice"), "alice", "west", expired);
        assertEquals(401, Integer.parseInt(post(west, old).substring(0, 3)));
        assertEquals(true, post(west, old).contains("token refused (EXPIRED)"), post(west, old));
        assertEquals(true, post(north, old).startsWith("401 UNAUTHORIZED token refused"), post(north, old));
        assertEquals(true, query(SignedTokens.issue(key("alice"), "alice", "registry", expired))
                .contains("token refused (EXPIRED)"));
        assertEquals("200 ", post(east, SignedTokens.issue(key("alice"), "alice", "east", inAnHour())),
                "and each still serves");
    }

    @Test
    void aTokenAlteredInAnyPartIsRefused401WithoutSayingWhichPart() throws Exception {
        String token = SignedTokens.issue(key("alice"), "alice", "east", inAnHour());
        assertTrue(postAnswer(east, token).startsWith("200 "), "unaltered: " + postAnswer(east, token));
        Set<String> answers = new HashSet<>();
        for (AlteredTokens.Altered bad : AlteredTokens.of(token)) {
            answers.add(postAnswer(east, bad.token()));
        }
        assertEquals(Set.of("401 Bearer UNAUTHORIZED token refused: it is not a valid token of a trusted issuer"),
                answers, "one answer, whichever part was altered");
    }
}
