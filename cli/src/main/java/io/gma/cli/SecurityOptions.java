package io.gma.cli;

import io.gma.security.Security;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * TLS, credentials and rules, the same options for every command: from a directory made by {@code gma keys}
 * (see {@link Security#fromDirectory}), or explicitly insecure. Without either, a command runs insecure and says
 * so in its log at start.
 */
public final class SecurityOptions {
    @Option(names = "--security", paramLabel = "DIR",
            description = "TLS, tokens and rules from DIR, as made by gma keys: its own certificate"
                    + " client-NAME.p12 (else server.p12), truststore.p12, store.pass, its signing key NAME.key"
                    + " (without one, the key of a domain that the trust lets sign for NAME: gma keys --vouch),"
                    + " the trust file trust, domain.keys if there is one, rules.")
    Path dir;

    @Option(names = "--identity", paramLabel = "NAME",
            description = "Who this side is, with --security: the CN of DIR/client-NAME.p12 and the subject of"
                    + " the tokens it makes (a server's default: the command's name).")
    String identity;

    @Option(names = "--client-auth", paramLabel = "none|want|need",
            description = "With --security, whether a server asks clients for a certificate: need for mutual TLS"
                    + " (default none: clients send tokens).")
    String clientAuth;

    @Option(names = "--rules", paramLabel = "FILE",
            description = "With --security, the rules instead of DIR/rules (security/README.md).")
    Path rules;

    @Option(names = "--insecure", description = "Plaintext, no authentication, every caller may do everything"
            + " (logged at WARN): needed to listen beyond this machine without --security; the default on"
            + " loopback.")
    boolean insecure;

    /**
     * The security these options give.
     *
     * @param serverIdentity a server's identity when --identity is not given; null: a client, which must give it
     * @throws CommandLine.ParameterException naming the option that is wrong, or the file that cannot be read
     */
    public Security security(CommandLine.Model.CommandSpec spec, String serverIdentity) {
        return security(spec, serverIdentity, "127.0.0.1");
    }

    /**
     * As {@link #security(CommandLine.Model.CommandSpec, String)}, for a server listening on {@code bindHost}:
     * without --security or --insecure, it may listen on this machine only.
     */
    public Security security(CommandLine.Model.CommandSpec spec, String serverIdentity, String bindHost) {
        if (dir == null) {
            for (String[] given : new String[][] {{"--identity", identity}, {"--client-auth", clientAuth},
                {"--rules", rules == null ? null : rules.toString()}}) {
                Cli.check(spec, given[1] == null, given[0] + " " + given[1] + " needs --security DIR");
            }
            if (insecure) {
                return Security.insecure();
            }
            try {
                return Security.unlessExposed(bindHost, spec.name());
            } catch (IllegalStateException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), spec.qualifiedName() + " --host "
                        + bindHost + " listens beyond this machine: give --security DIR (see gma keys) or"
                        + " --insecure");
            }
        }
        Cli.check(spec, !insecure, "--security and --insecure exclude each other: give one");
        String who = identity != null ? identity : serverIdentity;
        Cli.check(spec, who != null, "--security needs --identity NAME: who this side is (DIR/client-NAME.p12,"
                + " the subject of its tokens)");
        try {
            return Security.fromOptions(dir, who, clientAuth, rules);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
