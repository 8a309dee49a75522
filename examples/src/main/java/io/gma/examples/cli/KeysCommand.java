package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma keys}. */
@Command(name = "keys", mixinStandardHelpOptions = true,
        header = "Makes signing keys, the trust file, test certificates; rotates keys.",
        description = {"Makes, for trying GMA with security on: an Ed25519 signing key for each client (NAME.key;"
                + " a PC servlet is the client named after its domain), the trust file listing their public keys"
                + " (give the same trust file to every process), a self-signed CA with a server certificate and"
                + " client certificates (PKCS12, their password in store.pass) made with the JDK's keytool, and a"
                + " starter rules file that lets each client do everything. Existing files are not overwritten."
                + " A production domain takes its certificates from its own CA.",
            "With --rotate NAME: a new key for NAME, trusted at once; its old keys stay trusted for --overlap."
                + " With --retire NAME:KEYID: that key is dropped from the trust file now.",
            "With --vouch NAME:IDENTITIES (alone, in an existing --dir, or with --client NAME): NAME's key, a"
                + " domain's, may also sign for those identities; a process given --security DIR --identity ID"
                + " signs ID's tokens with NAME.key when DIR holds no ID.key of its own.",
            "With --token NAME: prints a token for NAME to show --audience, signed with NAME's key in --dir (or the"
                + " key of a domain that vouches for NAME): what a person pastes into the dashboard's sign-in."})
final class KeysCommand implements Callable<Integer> {
    private static final Duration MIN_LIFETIME = Duration.ofSeconds(10);
    private static final Duration MAX_LIFETIME = Duration.ofHours(24);

    @Option(names = "--dir", defaultValue = "gma-keys", description = "Where to write (default ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--host", defaultValue = "localhost,127.0.0.1", split = ",",
            description = "The server's names and addresses, the first its CN (default ${DEFAULT-VALUE}).")
    List<String> hosts;

    @Option(names = "--client", split = ",", description = "A signing key and a client certificate for each name"
            + " (none by default).")
    List<String> clients = List.of();

    @Option(names = "--hmac", description = "Also a domain secret for HMAC tokens (domain.keys): whoever holds it"
            + " can make a token for anyone, so only for one domain whose processes trust each other.")
    boolean hmac;

    @Option(names = "--rotate", paramLabel = "NAME", description = "Rotate NAME's signing key in --dir.")
    String rotate;

    @Option(names = "--overlap", paramLabel = "DURATION", defaultValue = "PT25H",
            description = "With --rotate: how long the old keys stay trusted, ISO-8601 (default ${DEFAULT-VALUE}:"
                    + " tokens live at most 24 h, plus a clock skew).")
    Duration overlap;

    @Option(names = "--retire", paramLabel = "NAME:KEYID", description = "Drop a key from the trust file in --dir"
            + " now: tokens it signed are refused at once.")
    String retire;

    @Option(names = "--vouch", paramLabel = "NAME:IDENTITIES", description = "Let NAME's key sign tokens for"
            + " IDENTITIES too (names or globs, comma-separated: alice,agent-*): NAME's lines in the trust file"
            + " vouch for NAME and them. May be given more than once.")
    List<String> vouch = List.of();

    @Option(names = "--token", paramLabel = "NAME", description = "Print a token for NAME, signed with its key in"
            + " --dir, to paste into the dashboard's sign-in (or to show --audience). Whoever holds it is NAME until"
            + " it expires: keep it private.")
    String token;

    @Option(names = "--audience", paramLabel = "WHOM", defaultValue = Security.REGISTRY_AUDIENCE,
            description = "With --token: whom it is for: registry, a domain (its PC servlet) or an endpoint's name"
                    + " (default ${DEFAULT-VALUE}).")
    String audience;

    @Option(names = "--lifetime", paramLabel = "DURATION", defaultValue = "PT8H",
            description = "With --token: how long it lives, ISO-8601, PT10S to PT24H (default ${DEFAULT-VALUE}).")
    Duration lifetime;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (token != null) {
            Cli.check(spec, clients.isEmpty() && !hmac && rotate == null && retire == null && vouch.isEmpty(),
                    "--token prints a token from an existing --dir: not with --client, --hmac, --rotate, --retire"
                    + " or --vouch");
            Cli.check(spec, lifetime.compareTo(MIN_LIFETIME) >= 0 && lifetime.compareTo(MAX_LIFETIME) <= 0,
                    "--lifetime " + lifetime + " is outside PT10S..PT24H (a token that lives longer is refused"
                    + " everywhere)");
            try {
                out.println(token(dir, token, audience, lifetime));
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--token " + token + ": "
                        + e.getMessage());
            }
            spec.commandLine().getErr().println("gma keys: a token for " + token + " to show " + audience
                    + ", until " + Instant.now().plus(lifetime).truncatedTo(ChronoUnit.SECONDS)
                    + ": whoever holds it is " + token + " until then");
            return 0;
        }
        Cli.check(spec, rotate == null || retire == null, "--rotate and --retire exclude each other: give one");
        for (String v : vouch) {
            Cli.check(spec, v.matches("[^:]+:[^,]+(,[^,]+)*"), "--vouch " + v + " is not NAME:IDENTITIES");
        }
        // --rotate, --retire and --vouch without --client or --hmac change a directory made before
        boolean make = !clients.isEmpty() || hmac || vouch.isEmpty() && rotate == null && retire == null;
        if (!make) {
            Cli.check(spec, !overlap.isNegative(), "--overlap " + overlap + " is negative");
            change(out);
            vouch(out);
            return 0;
        }
        Cli.check(spec, rotate == null && retire == null, "--client and --hmac make a new directory: not with"
                + " --rotate or --retire");
        List<String> identities = new ArrayList<>(clients);
        for (String v : vouch) {
            String issuer = v.split(":", 2)[0];
            Cli.check(spec, clients.contains(issuer), "--vouch " + v + " in a new directory needs --client "
                    + issuer + ", whose key is to sign");
            identities.addAll(List.of(v.split(":", 2)[1].split(",")));
        }
        List<Path> written = new ArrayList<>(Keys.make(dir, hosts, clients));
        if (hmac) {
            written.add(Keys.writeDomainKeys(dir));
        }
        for (Path p : written) {
            out.println("wrote " + p);
        }
        Path rules = dir.resolve("rules");
        if (!Files.exists(rules)) {
            Files.writeString(rules, starterRules(identities), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE_NEW);
            out.println("wrote " + rules);
        }
        vouch(out);
        out.println("keep ca.p12, store.pass" + (hmac ? ", domain.keys" : "") + " and the .key files in " + dir
                + " private; give " + dir.resolve(Keys.TRUST) + " to every process that checks tokens");
        String committable = committable(dir);
        if (committable != null) {
            spec.commandLine().getErr().println("gma keys: warning: " + committable);
        }
        return 0;
    }

    /**
     * Why the private keys in {@code dir} could be committed by mistake: it is inside a git work tree, and git does
     * not ignore it; null when they could not (no work tree, or ignored).
     */
    static String committable(Path dir) throws InterruptedException {
        Path abs = dir.toAbsolutePath().normalize();
        Path root = abs;
        while (root != null && !Files.exists(root.resolve(".git"))) {
            root = root.getParent();
        }
        if (root == null) {
            return null;
        }
        String advice = ": a `git add` of the work tree would commit its private keys; add it to " + root.resolve(
                ".gitignore") + ", or make the keys outside the work tree";
        try {
            Process git = new ProcessBuilder("git", "-C", root.toString(), "check-ignore", "-q", abs.toString())
                    .redirectErrorStream(true).start();
            git.getInputStream().readAllBytes();
            if (!git.waitFor(10, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return abs + " is inside the git work tree " + root + ", and git did not say in 10 s whether it"
                        + " ignores it" + advice;
            }
            // 0: ignored; 1: not ignored; other: git could not tell
            return git.exitValue() == 0 ? null : abs + " is inside the git work tree " + root
                    + (git.exitValue() == 1 ? ", which does not ignore it" : ", and git could not say whether it"
                            + " ignores it") + advice;
        } catch (IOException noGit) {
            return abs + " is inside the git work tree " + root + " (git is not installed to say whether it ignores"
                    + " it)" + advice;
        }
    }

    /**
     * A token for {@code identity} to show {@code audience}, living {@code lifetime}, signed with the key in
     * {@code dir} that signs its tokens ({@link Security#fromDirectory}).
     *
     * @throws IOException if a file of {@code dir} is missing or cannot be read
     * @throws IllegalArgumentException if no key in {@code dir} signs for {@code identity}
     */
    static String token(Path dir, String identity, String audience, Duration lifetime) throws IOException {
        String bearer = Security.fromDirectory(dir, identity, Tls.ClientAuth.NONE).tokenLifetime(lifetime).build()
                .bearer(audience);
        if (bearer == null) {
            throw new IllegalArgumentException(dir + " holds no key that signs " + identity + "'s tokens ("
                    + dir.resolve(identity + ".key") + ", or the key of a domain that vouches for " + identity
                    + "): give it one with --client " + identity + " in a new --dir, or let a domain's key here sign"
                    + " for it with --vouch DOMAIN:" + identity);
        }
        return bearer.substring(Security.BEARER.length());
    }

    /** --rotate or --retire, if given. */
    private void change(PrintWriter out) throws Exception {
        if (rotate != null) {
            String keyId = Keys.rotate(dir, rotate, overlap);
            out.println(rotate + " signs with its new key " + keyId + " (" + dir.resolve(rotate + ".key") + ");"
                    + " its older keys stay trusted for " + overlap + " in " + dir.resolve(Keys.TRUST)
                    + ": give that file to every process that checks tokens");
        } else if (retire != null) {
            int colon = retire.lastIndexOf(':');
            Cli.check(spec, colon > 0 && colon < retire.length() - 1, "--retire " + retire + " is not NAME:KEYID");
            Keys.retire(dir, retire.substring(0, colon), retire.substring(colon + 1));
            out.println("dropped key " + retire.substring(colon + 1) + " of " + retire.substring(0, colon) + " from "
                    + dir.resolve(Keys.TRUST));
        }
    }

    /** Each --vouch NAME:IDENTITIES into the trust file. */
    private void vouch(PrintWriter out) throws Exception {
        for (String v : vouch) {
            String[] part = v.split(":", 2);
            try {
                Keys.vouch(dir, part[0], List.of(part[1].split(",")));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--vouch " + v + ": " + e.getMessage());
            }
            out.println(part[0] + " may sign for " + part[1] + " (" + dir.resolve(Keys.TRUST) + "): a process that"
                    + " is one of them, without a key of its own, signs with " + dir.resolve(part[0] + ".key"));
        }
    }

    /** Rules that let each of {@code clients} do everything: a start, to be narrowed. */
    static String starterRules(List<String> clients) {
        StringBuilder b = new StringBuilder(String.join("\n",
                "# GMA rules (security/README.md): verb identity target, one rule a line; what no rule allows is",
                "# refused. Made by gma keys for trying things out: each client below may do everything. Narrow it:",
                "#   register alice cpu-*@dsg          endpoints labelled cpu-... in domain dsg",
                "#   domain   dsg   dsg                the PC servlet of dsg registers its domain",
                "#   send     alice *@dsg              send to (and look up) any endpoint of dsg",
                "#   post     cardiff cardiff          POST batches to a PC servlet as domain cardiff",
                "#   query    *     endpoints,domains  registry queries over these tables",
                "#   table    alice host_*             declare monitoring tables named host_... at the registry",
                ""));
        if (!clients.isEmpty()) {
            String who = String.join(",", clients);
            for (String verb : new String[] {"register", "domain", "send", "post", "query", "table"}) {
                b.append(String.format("%-8s %s *", verb, who)).append('\n');
            }
        }
        return b.toString();
    }
}
