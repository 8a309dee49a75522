package io.gma.examples.cli;

import io.gma.security.Keys;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma keys}. */
@Command(name = "keys", mixinStandardHelpOptions = true, header = "Makes a domain secret and test certificates.",
        description = "Makes, for trying GMA with security on: the domain's token secret (domain.keys), and a"
                + " self-signed CA with a server certificate and client certificates (PKCS12, their password in"
                + " store.pass), with the JDK's keytool, and a starter rules file that lets each client do everything."
                + " Existing files are not overwritten. A production domain takes its certificates from its own CA.")
final class KeysCommand implements Callable<Integer> {
    @Option(names = "--dir", defaultValue = "gma-keys", description = "Where to write (default ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--host", defaultValue = "localhost,127.0.0.1", split = ",",
            description = "The server's names and addresses, the first its CN (default ${DEFAULT-VALUE}).")
    List<String> hosts;

    @Option(names = "--client", split = ",", description = "A client certificate for each name (none by"
            + " default).")
    List<String> clients = List.of();

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        for (Path p : Keys.make(dir, hosts, clients)) {
            out.println("wrote " + p);
        }
        Path rules = dir.resolve("rules");
        if (!Files.exists(rules)) {
            Files.writeString(rules, starterRules(clients), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            out.println("wrote " + rules);
        }
        out.println("keep " + dir.resolve("ca.p12") + ", domain.keys and store.pass private");
        return 0;
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
                ""));
        if (!clients.isEmpty()) {
            String who = String.join(",", clients);
            for (String verb : new String[] {"register", "domain", "send", "post", "query"}) {
                b.append(String.format("%-8s %s *", verb, who)).append('\n');
            }
        }
        return b.toString();
    }
}
