package io.gma.cli;

import io.gma.security.Security;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Where the registry is. */
public final class RegistryOption {
    @Option(names = "--registry", paramLabel = "URL", defaultValue = "http://127.0.0.1:8080",
            description = "The registry's base URL (default ${DEFAULT-VALUE}).")
    String url;

    /** The registry's base URL. */
    public String url() {
        return url;
    }

    /**
     * Refuses, as a usage error, a registry URL that is not https when {@code security} is on: its calls would
     * show the credentials in plaintext (RegistryClient refuses them too). Checked before anything is sent, so
     * that every command says it in the same line, naming the option and the URL.
     *
     * @throws CommandLine.ParameterException {@code --registry URL: expected scheme 'https' but was ...}
     */
    public void requireSecure(CommandLine.Model.CommandSpec spec, Security security) {
        try {
            security.requireSecureUrl(url, "--registry");
        } catch (IllegalArgumentException plaintext) {
            throw new CommandLine.ParameterException(spec.commandLine(), plaintext.getMessage());
        }
    }
}
