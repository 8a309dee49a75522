package io.gma.cli;

import io.gma.security.Security;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * TLS and tokens for a command that only calls out (query, ping, tail, pub, sub, request): from a directory made
 * by {@code gma keys}, as the identity given. Without them, the command runs insecure on this machine, as every
 * command does by default. The options only servers have ({@code --client-auth}, {@code --rules},
 * {@code --insecure}) are {@link SecurityOptions}'.
 */
public final class ClientSecurityOptions {
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

    /**
     * The security these options give a client, which listens (for its direct links) on this machine only.
     *
     * @throws CommandLine.ParameterException naming the option that is wrong, or the file that cannot be read
     */
    public Security security(CommandLine.Model.CommandSpec spec) {
        return security(spec, null, null, null, "127.0.0.1");
    }

    /** The security of these options with a server's: its default identity, client-auth mode and rules file. */
    Security security(CommandLine.Model.CommandSpec spec, String serverIdentity, String clientAuth, Path rules,
            String bindHost) {
        if (dir == null) {
            Cli.check(spec, identity == null, "--identity " + identity + " needs --security DIR");
            return Security.unlessExposed(bindHost, spec.name());
        }
        String who = identity != null ? identity : serverIdentity;
        Cli.check(spec, who != null, "--security needs --identity NAME: who this side is (DIR/client-NAME.p12,"
                + " the subject of its tokens)");
        try {
            return Security.fromOptions(dir, who, clientAuth, rules);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** Whether --security was given. */
    boolean given() {
        return dir != null;
    }
}
