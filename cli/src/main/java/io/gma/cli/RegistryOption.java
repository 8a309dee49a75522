package io.gma.cli;

import io.gma.security.Security;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Where the registry is. */
public final class RegistryOption {
    @Option(names = "--registry", paramLabel = "URL[,URL...]", defaultValue = "http://127.0.0.1:8080",
            description = "The registry's base URL, or those of several registries sharing one database, separated"
                    + " by commas: a call goes on to the next when one does not answer (default ${DEFAULT-VALUE}).")
    String url;

    /** The registry's base URL, or several separated by commas, as given (RegistryClient.builder reads them). */
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
            for (String each : url.split(",")) {
                security.requireSecureUrl(each.trim(), "--registry");
            }
        } catch (IllegalArgumentException plaintext) {
            throw new CommandLine.ParameterException(spec.commandLine(), plaintext.getMessage());
        }
    }
}
