package io.gma.examples.cli;

import io.gma.security.Keys;
import java.io.PrintWriter;
import java.nio.file.Path;
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
                + " store.pass), with the JDK's keytool. Existing files are not overwritten. A production domain"
                + " takes its certificates from its own CA.")
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
        out.println("keep " + dir.resolve("ca.p12") + ", domain.keys and store.pass private");
        return 0;
    }
}
