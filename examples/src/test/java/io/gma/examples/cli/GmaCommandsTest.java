package io.gma.examples.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.wire.Threads;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The gma commands against a real registry, each run as a user would, its output read back. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class GmaCommandsTest {
    /** One run: its exit status and what it printed. */
    record Run(int status, String out, String err) {
    }

    static Run gma(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Gma.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(status, out.toString(), err.toString());
    }

    /** Each background run's first line, completed when it is printed, for tests that need it early. */
    private static final java.util.Map<CompletableFuture<Run>, CompletableFuture<String>> FIRST_LINE =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** Keeps what is written, and completes {@code firstLine} when the first line is whole. */
    private static final class Output extends Writer {
        private final StringBuffer text = new StringBuffer(); // safe to read while it is written
        final CompletableFuture<String> firstLine = new CompletableFuture<>();

        @Override
        public void write(char[] chars, int off, int len) {
            text.append(chars, off, len);
            int end = text.indexOf("\n");
            if (end >= 0 && !firstLine.isDone()) {
                firstLine.complete(text.substring(0, end));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }

    static CompletableFuture<Run> background(String... args) {
        Output out = new Output();
        StringWriter err = new StringWriter();
        CompletableFuture<Run> run = new CompletableFuture<>();
        FIRST_LINE.put(run, out.firstLine);
        Threads.start("gma-command", () -> run.complete(new Run(Gma.run(args, new PrintWriter(out, true),
                new PrintWriter(err, true)), out.toString(), err.toString())));
        return run;
    }

    private static void waitFor(CompletableFuture<Run> run, String registry, String name) {
        await(name + " did not register").atMost(Duration.ofSeconds(20))
                .failFast(name + " did not register: its command ended", run::isDone)
                .until(() -> gma("query", "--registry", registry, "SELECT name FROM producers").out().contains(name));
    }

    /** Waits for the agent to have published its tables, which it declares once it has registered. */
    private static void waitForTables(CompletableFuture<Run> agent, String registry) {
        await("the agent did not publish its tables").atMost(Duration.ofSeconds(20))
                .failFast("the agent's command ended", agent::isDone)
                .until(() -> gma("query", "--registry", registry, "SELECT name FROM publishers WHERE table_name ="
                        + " 'host_net'").out().contains("agent-"));
    }

    @Test
    void pingPongQueryAndTheAgentsTables() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            CompletableFuture<Run> pong = background("pong", "--registry", url, "--domain", "lan", "--duration", "8");
            waitFor(pong, url, "pong@lan");
            Run ping = gma("ping", "pong@lan", "--registry", url, "--domain", "lan", "-c", "3", "-i", "0");
            assertEquals(0, ping.status(), ping.err());
            assertTrue(ping.out().startsWith("PING pong@lan: 64 data bytes\n64 bytes from pong@lan: seq=1 time="),
                    ping.out());
            assertTrue(ping.out().matches("(?s).*seq=3 time=[0-9.]+ ms\n--- pong@lan ping statistics ---\n3"
                    + " transmitted, 3 received, 0% loss, time [0-9]+ ms\nrtt min/avg/max/mdev = .*"), ping.out());

            Run table = gma("query", "--registry", url, "SELECT name, domain FROM producers");
            assertEquals(0, table.status(), table.err());
            assertEquals("name      domain\n--------  ------\npong@lan  lan\n1 row\n", table.out());
            Run json = gma("query", "--json", "--registry", url, "SELECT name FROM producers");
            assertEquals("{\"columns\":[\"name\"],\"rows\":[[\"pong@lan\"]]}\n", json.out());
            Run refused = gma("query", "--registry", url, "DELETE FROM endpoints");
            assertEquals(1, refused.status());
            assertTrue(refused.err().startsWith("gma: ") && refused.err().lines().count() == 1, refused.err());

            CompletableFuture<Run> agent = background("agent", "--registry", url, "--domain", "lan", "--host",
                    "testhost", "--interval", "200", "--duration", "12");
            waitFor(agent, url, "agent-");
            waitForTables(agent, url);
            Run memory = gma("select", "--registry", url, "SELECT host, total, used_pct FROM host_memory");
            assertEquals(0, memory.status(), memory.err());
            assertTrue(memory.out().matches("host +total +used_pct +producer +inserted\n-+ +-+ +-+ +-+ +-+\n"
                    + "testhost +[0-9]+ +[0-9.]+ +agent-[a-z2-7]{6}@lan +[0-9:.]+\n1 row\n"), memory.out());
            Run cpu = gma("select", "--registry", url, "--continuous", "--duration", "2",
                    "SELECT host, busy FROM host_cpu WHERE cpu = -1");
            assertEquals(0, cpu.status(), cpu.err());
            assertTrue(cpu.out().matches("([0-9:.]+ agent-[a-z2-7]{6}@lan: host=testhost busy=[0-9.]+\n)+"), cpu.out());
            assertEquals(0, agent.get(20, TimeUnit.SECONDS).status());
            assertEquals(0, pong.get(20, TimeUnit.SECONDS).status());
        }
    }

    /** The README's example of forwarding through a firewall, command by command. */
    @Test
    void eventsFromBehindAFirewallReachTheOtherDomain(@TempDir Path spools) throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            CompletableFuture<Run> site = background("pc", "--domain", "site", "--registry", url, "--http-port", "0",
                    "--uplink-port", "0", "--duration", "12", "--data-dir", spools.resolve("site").toString());
            CompletableFuture<Run> lab = background("pc", "--domain", "lab", "--via", "site", "--registry", url,
                    "--http-port", "0", "--uplink-port", "0", "--duration", "12", "--data-dir",
                    spools.resolve("lab").toString());
            String siteUplink = uplink(site);
            String labUplink = uplink(lab);
            CompletableFuture<Run> agent = background("agent", "--registry", url, "--domain", "lab", "--pc",
                    labUplink, "--host", "inside", "--interval", "200", "--duration", "8");
            waitFor(agent, url, "@lab");
            Run rows = gma("select", "--continuous", "--registry", url, "--domain", "site", "--pc", siteUplink,
                    "--duration", "3", "SELECT host, total FROM host_memory WHERE domain = 'lab'");
            assertEquals(0, rows.status(), rows.err());
            assertTrue(rows.out().matches("(?s).* agent-[a-z2-7]{6}@lab: host=inside total=[0-9]+\n.*"), rows.out());
            assertEquals(0, agent.get(20, TimeUnit.SECONDS).status());
            assertEquals(0, lab.get(20, TimeUnit.SECONDS).status());
            assertEquals(0, site.get(20, TimeUnit.SECONDS).status());
        }
    }

    /** The uplink address a background gma pc printed. */
    private static String uplink(CompletableFuture<Run> pc) throws Exception {
        try {
            String line = FIRST_LINE.get(pc).get(20, TimeUnit.SECONDS);
            return line.substring(line.lastIndexOf(' ') + 1).strip();
        } catch (TimeoutException e) {
            throw new AssertionError("gma pc printed no uplink address");
        }
    }

    @Test
    void keysWarnsWhenItsDirectoryIsInAGitWorkTreeThatDoesNotIgnoreIt(@TempDir Path tree) throws Exception {
        Process init = new ProcessBuilder("git", "init", "-q", tree.toString()).redirectErrorStream(true).start();
        init.getInputStream().readAllBytes();
        assertEquals(0, init.waitFor(), "git init");
        Run exposed = gma("keys", "--dir", tree.resolve("gma-keys").toString(), "--client", "alice");
        assertEquals(0, exposed.status(), exposed.err());
        assertEquals("gma keys: warning: " + tree.resolve("gma-keys") + " is inside the git work tree " + tree
                + ", which does not ignore it: a `git add` of the work tree would commit its private keys; add it to "
                + tree.resolve(".gitignore") + ", or make the keys outside the work tree\n", exposed.err());
        Files.writeString(tree.resolve(".gitignore"), "*-keys/\n");
        Run ignored = gma("keys", "--dir", tree.resolve("site-keys").toString(), "--client", "bob");
        assertEquals(0, ignored.status(), ignored.err());
        assertEquals("", ignored.err(), "ignored: no warning");
    }

    @Test
    void keysMakesSigningKeysTheTrustFileAndCertificatesAndRotates(@TempDir Path dir) throws Exception {
        Run keys = gma("keys", "--dir", dir.toString(), "--client", "alice");
        assertEquals(0, keys.status(), keys.err());
        for (String file : new String[] {"alice.key", "trust", "store.pass", "ca.p12", "ca.pem", "truststore.p12",
            "server.p12", "client-alice.p12"}) {
            assertTrue(keys.out().contains("wrote " + dir.resolve(file) + "\n"), keys.out());
        }
        assertFalse(Files.exists(dir.resolve("domain.keys")), "no shared HMAC secret unless --hmac");
        Run again = gma("keys", "--dir", dir.toString());
        assertEquals(1, again.status());
        assertEquals("gma: " + dir.resolve("store.pass") + " exists already: not overwritten\n", again.err());

        Run rotate = gma("keys", "--dir", dir.toString(), "--rotate", "alice", "--overlap", "PT1H");
        assertEquals(0, rotate.status(), rotate.err());
        assertTrue(rotate.out().startsWith("alice signs with its new key k2"), rotate.out());
        String trust = Files.readString(dir.resolve("trust"));
        assertTrue(trust.matches("(?s).*\nalice k1 \\S+ alice until=\\S+\nalice k2 \\S+ alice\n.*"), trust);
        Run retire = gma("keys", "--dir", dir.toString(), "--retire", "alice:k1");
        assertEquals(0, retire.status(), retire.err());
        assertFalse(Files.readString(dir.resolve("trust")).contains("alice k1 "));
        Run bad = gma("keys", "--dir", dir.toString(), "--retire", "alice");
        assertEquals(2, bad.status());
        assertEquals("--retire alice is not NAME:KEYID (see gma keys --help)\n", bad.err());

        Path hmac = dir.resolve("hmac");
        Run withHmac = gma("keys", "--dir", hmac.toString(), "--hmac");
        assertEquals(0, withHmac.status(), withHmac.err());
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(hmac.resolve("domain.keys"))));
    }

    @Test
    void keysPrintsATokenForTheDashboardThatTheRegistryTakes(@TempDir Path dir) throws Exception {
        assertEquals(0, gma("keys", "--dir", dir.toString(), "--client", "alice").status());
        Run token = gma("keys", "--dir", dir.toString(), "--token", "alice");
        assertEquals(0, token.status(), token.err());
        assertTrue(token.out().matches("gma2\\.[A-Za-z0-9_.-]+\n"), token.out());
        assertTrue(token.err().matches("gma keys: a token for alice to show registry, until \\S+Z: whoever holds it"
                + " is alice until then\n"), token.err());
        Security registry = Security.fromDirectory(dir, "registry", Tls.ClientAuth.NONE).build();
        assertEquals("alice", registry.authenticate("Bearer " + token.out().strip(), null, "registry"));
        Run forEast = gma("keys", "--dir", dir.toString(), "--token", "alice", "--audience", "east", "--lifetime",
                "PT10M");
        assertEquals(0, forEast.status(), forEast.err());
        AuthException misdirected = assertThrows(AuthException.class,
                () -> registry.authenticate("Bearer " + forEast.out().strip(), null, "registry"));
        assertTrue(misdirected.getMessage().contains("WRONG_AUDIENCE"), misdirected.getMessage());

        Run tooLong = gma("keys", "--dir", dir.toString(), "--token", "alice", "--lifetime", "PT25H");
        assertEquals(2, tooLong.status());
        assertEquals("--lifetime PT25H is outside PT10S..PT24H (a token that lives longer is refused everywhere)"
                + " (see gma keys --help)\n", tooLong.err());
        Run nobody = gma("keys", "--dir", dir.toString(), "--token", "bob");
        assertEquals(2, nobody.status());
        assertEquals("--token bob: " + dir + " holds no key that signs bob's tokens (" + dir.resolve("bob.key")
                + ", or the key of a domain that vouches for bob): give it one with --client bob in a new --dir, or"
                + " let a domain's key here sign for it with --vouch DOMAIN:bob (see gma keys --help)\n", nobody.err());
        Run mixed = gma("keys", "--dir", dir.toString(), "--token", "alice", "--rotate", "alice");
        assertEquals(2, mixed.status());
        assertTrue(mixed.err().startsWith("--token prints a token from an existing --dir: not with"), mixed.err());
    }

    /**
     * gma keys --vouch lets east's key sign for alice, who has no key: the gma commands sign her tokens with it and
     * the registry takes them for her; east's key still signs for nobody else.
     */
    @Test
    void aDomainsKeySignsForTheIdentitiesItVouchesFor(@TempDir Path temp) throws Exception {
        Path dir = temp.resolve("keys");
        Run keys = gma("keys", "--dir", dir.toString(), "--client", "east", "--vouch", "east:alice");
        assertEquals(0, keys.status(), keys.err());
        assertTrue(keys.out().contains("\neast may sign for alice (" + dir.resolve("trust") + "): a process that is"
                + " one of them, without a key of its own, signs with " + dir.resolve("east.key") + "\n"), keys.out());
        assertTrue(Files.readString(dir.resolve("trust")).matches("(?s).*\neast k1 \\S+ east,alice\n.*"));
        assertFalse(Files.exists(dir.resolve("alice.key")));
        assertTrue(Files.readString(dir.resolve("rules")).contains("\nquery    east,alice *\n"));
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String east = b64.encodeToString("east".getBytes(StandardCharsets.UTF_8));
        String alice = b64.encodeToString("alice".getBytes(StandardCharsets.UTF_8));
        String bearer = Security.fromOptions(dir, "alice", null, null).bearer(Security.REGISTRY_AUDIENCE);
        assertTrue(bearer != null && bearer.startsWith("Bearer gma2." + east + ".k1." + alice + "."),
                "alice's tokens are signed by east's key: " + bearer);

        try (Registry registry = Registry.builder().port(0).security(Security.fromDirectory(dir, "registry",
                Tls.ClientAuth.NONE).build()).build().start()) {
            Run asAlice = gma("query", "--registry", registry.url(), "--security", dir.toString(), "--identity",
                    "alice", "SELECT name FROM endpoints");
            assertEquals(0, asAlice.status(), asAlice.err());
            Run asBob = gma("query", "--registry", registry.url(), "--security", dir.toString(), "--identity", "bob",
                    "SELECT name FROM endpoints");
            assertEquals(1, asBob.status());
            assertTrue(asBob.err().startsWith("gma: no credentials"), "east's key signs not for bob: " + asBob.err());
            String forBob = SignedTokens.issue(SigningKey.read(dir.resolve("east.key")), "bob",
                    Security.REGISTRY_AUDIENCE, Instant.now().plusSeconds(3600));
            Security showing = Security.builder().tls(Tls.builder().trustStore(dir.resolve("truststore.p12"), Files
                    .readString(dir.resolve("store.pass")).strip().toCharArray()).build()).token(() -> forBob).build();
            RegistryException refused = assertThrows(RegistryException.class, () -> RegistryClient.builder(registry
                    .url()).security(showing).build().query("SELECT name FROM endpoints"));
            assertEquals(401, refused.status());
            assertEquals("token refused (FOREIGN_SUBJECT): issuer \"east\" is not trusted to vouch for \"bob\"",
                    refused.getMessage());
        }

        Run more = gma("keys", "--dir", dir.toString(), "--vouch", "east:alice,agent-*");
        assertEquals(0, more.status(), more.err());
        assertTrue(Files.readString(dir.resolve("trust")).contains(" east,alice,agent-*\n"));
        Run unknown = gma("keys", "--dir", dir.toString(), "--vouch", "north:alice");
        assertEquals(2, unknown.status());
        assertEquals("--vouch north:alice: the trust holds no key of issuer north (see gma keys --help)\n",
                unknown.err());
        Run malformed = gma("keys", "--dir", dir.toString(), "--vouch", "east:");
        assertEquals(2, malformed.status());
        assertEquals("--vouch east: is not NAME:IDENTITIES (see gma keys --help)\n", malformed.err());
        assertTrue(gma("keys", "--help").out().contains("--vouch=NAME:IDENTITIES"));
    }

    @Test
    void registryAndPcServletStartAndStop(@TempDir Path spool) throws Exception {
        Run registry = gma("registry", "--port", "0", "--duration", "1");
        assertEquals(0, registry.status(), registry.err());
        assertTrue(registry.out().matches("GMA registry at http://127\\.0\\.0\\.1:[0-9]+/registry/v1\n"),
                registry.out());
        try (Registry r = Registry.builder().port(0).build().start()) {
            Run pc = gma("pc", "--domain", "east", "--registry", r.url(), "--http-port", "0", "--uplink-port", "0",
                    "--duration", "1", "--data-dir", spool.toString());
            assertEquals(0, pc.status(), pc.err());
            assertTrue(pc.out().matches("GMA PC servlet of east at http://127\\.0\\.0\\.1:[0-9]+, uplinks at"
                    + " 127\\.0\\.0\\.1:[0-9]+\nspool in .* \\(fsync batch\\)\n"), pc.out());
        }
        Run missing = gma("pc", "--registry", "http://127.0.0.1:1");
        assertEquals(2, missing.status());
        assertEquals("--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain) (see gma pc --help)\n",
                missing.err());
    }

    @Test
    void keysRegistryAndQueryWithSecurity(@TempDir Path temp) throws Exception {
        String dir = temp.resolve("keys").toString();
        Run keys = gma("keys", "--dir", dir, "--client", "alice,bob");
        assertEquals(0, keys.status(), keys.err());
        assertTrue(Files.readString(Path.of(dir, "rules")).contains("\nquery    alice,bob *\n"), keys.out());

        io.gma.security.Keys.addIdentities(Path.of(dir), List.of("carol")); // a key, and no rules for her
        CompletableFuture<Run> registry = background("registry", "--port", "0", "--duration", "20", "--security",
                dir, "--client-auth", "want");
        CompletableFuture<String> firstLine = FIRST_LINE.get(registry);
        try {
            CompletableFuture.anyOf(firstLine, registry).get(20, TimeUnit.SECONDS); // its address, or its end
        } catch (TimeoutException e) {
            // neither: the assertion below says so
        }
        String first = firstLine.getNow(null);
        assertTrue(first != null && first.matches("GMA registry at https://127\\.0\\.0\\.1:[0-9]+/registry/v1"),
                first + " " + (registry.isDone() ? registry.get() : ""));
        String url = first.substring("GMA registry at ".length());

        Run alice = gma("query", "--registry", url, "--security", dir, "--identity", "alice",
                "SELECT name FROM endpoints");
        assertEquals(0, alice.status(), alice.err());
        assertEquals("name\n----\n0 rows\n", alice.out());
        Run carol = gma("query", "--registry", url, "--security", dir, "--identity", "carol",
                "SELECT name FROM endpoints");
        assertEquals(1, carol.status());
        assertEquals("gma: \"carol\" may not query the table \"endpoints\": no query rule in rules allows it\n",
                carol.err());
        Run noIdentity = gma("query", "--registry", url, "--security", dir, "SELECT 1");
        assertEquals(2, noIdentity.status());
        assertTrue(noIdentity.err().startsWith("--security needs --identity NAME"), noIdentity.err());
        Run plaintext = gma("query", "--registry", url.replace("https:", "http:"), "--security", dir, "--identity",
                "alice", "SELECT 1");
        assertEquals(2, plaintext.status());
        assertTrue(plaintext.err().contains("expected scheme 'https' but was 'http'"), plaintext.err());
        Run untrusted = gma("query", "--registry", url, "SELECT name FROM endpoints");
        assertEquals(1, untrusted.status());
        assertTrue(untrusted.err().startsWith("gma: registry at " + url + " did not answer POST"
                + " /registry/v1/query: " + url.replace("/registry/v1", "") + " presents a certificate this side"
                + " does not trust (PKIX path building failed"), untrusted.err());
        assertTrue(untrusted.err().endsWith("): give it the registry's trust, the truststore.p12 of the directory gma"
                + " keys made (--security DIR, Security.fromDirectory)\n"), untrusted.err());
        String base = url.replace("/registry/v1", "");
        Run plainToTls = gma("query", "--registry", base.replace("https:", "http:"), "SELECT 1");
        assertEquals(1, plainToTls.status(), plainToTls.out());
        assertTrue(plainToTls.err().endsWith(": " + base.replace("https:", "http:") + " speaks TLS: use " + base
                + ", with the trust of --security DIR\n"), plainToTls.err());
        try (Registry plain = Registry.builder().port(0).build().start()) {
            String https = plain.url().replace("http:", "https:");
            Run tlsToPlain = gma("query", "--registry", https, "--security", dir, "--identity", "alice", "SELECT 1");
            assertEquals(1, tlsToPlain.status(), tlsToPlain.out());
            assertTrue(tlsToPlain.err().endsWith(": " + https + " answers in plaintext, not TLS: use " + plain.url()
                    + ", or start the registry with --security DIR\n"), tlsToPlain.err());
        }

        Run both = gma("registry", "--port", "0", "--security", dir, "--insecure");
        assertEquals(2, both.status());
        assertEquals("--security and --insecure exclude each other: give one (see gma registry --help)\n",
                both.err());
        Run rulesAlone = gma("registry", "--port", "0", "--rules", "r");
        assertEquals(2, rulesAlone.status());
        assertEquals("--rules r needs --security DIR (see gma registry --help)\n", rulesAlone.err());
        Run badMode = gma("registry", "--port", "0", "--security", dir, "--client-auth", "maybe");
        assertEquals(2, badMode.status());
        assertEquals("--client-auth maybe is not none, want or need (see gma registry --help)\n", badMode.err());
        // plaintext beyond this machine only when asked for: refused before anything listens
        Run exposed = gma("pc", "--domain", "x", "--host", "0.0.0.0", "--http-port", "0", "--uplink-port", "0",
                "--memory");
        assertEquals(2, exposed.status());
        assertEquals("gma pc --host 0.0.0.0 listens beyond this machine: give --security DIR (see gma keys) or"
                + " --insecure (see gma pc --help)\n", exposed.err());
    }
}
