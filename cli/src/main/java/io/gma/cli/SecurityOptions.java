package io.gma.cli;

import io.gma.security.Security;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * TLS, credentials and rules for a server (registry, pc): {@link ClientSecurityOptions}' directory and identity,
 * with how it treats its clients (client certificates, rules), or explicitly insecure. Without either, a server
 * runs insecure on this machine only and says so in its log at start.
 */
public final class SecurityOptions {
    @Mixin
    ClientSecurityOptions client;

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
     * The security these options give a server listening on {@code bindHost}: without --security or --insecure,
     * it may listen on this machine only.
     *
     * @param serverIdentity its identity when --identity is not given
     * @throws CommandLine.ParameterException naming the option that is wrong, or the file that cannot be read
     */
    public Security security(CommandLine.Model.CommandSpec spec, String serverIdentity, String bindHost) {
        if (!client.given()) {
            for (String[] given : new String[][] {{"--client-auth", clientAuth},
                {"--rules", rules == null ? null : rules.toString()}}) {
                Cli.check(spec, given[1] == null, given[0] + " " + given[1] + " needs --security DIR");
            }
            if (insecure) {
                Cli.check(spec, client.identity == null, "--identity " + client.identity + " needs --security DIR");
                return Security.insecure();
            }
            try {
                return client.security(spec, null, null, null, bindHost);
            } catch (IllegalStateException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), spec.qualifiedName() + " --host "
                        + bindHost + " listens beyond this machine: give --security DIR (see gma keys) or"
                        + " --insecure");
            }
        }
        Cli.check(spec, !insecure, "--security and --insecure exclude each other: give one");
        return client.security(spec, serverIdentity, clientAuth, rules, bindHost);
    }
}
