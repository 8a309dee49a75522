package io.gma.examples.cli;

import picocli.CommandLine.Option;

/** Where the registry is. */
final class RegistryOption {
    @Option(names = "--registry", paramLabel = "URL", defaultValue = "http://127.0.0.1:8080",
            description = "The registry's base URL (default ${DEFAULT-VALUE}).")
    String url;
}
