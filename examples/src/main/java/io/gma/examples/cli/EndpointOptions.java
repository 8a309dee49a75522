package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.ClientSecurityOptions;
import io.gma.cli.RegistryOption;
import io.gma.client.EndpointBuilder;
import io.gma.security.Security;
import io.gma.wire.Name;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options every command that runs an endpoint takes. */
final class EndpointOptions {
    @Mixin
    RegistryOption registry;

    @Option(names = "--domain", defaultValue = "lan", converter = DomainConverter.class,
            description = "The endpoint's domain (default ${DEFAULT-VALUE}).")
    String domain;

    @Option(names = "--pc", paramLabel = "HOST:PORT",
            description = "The uplink of the domain's PC servlet, to reach other domains (default"
                    + " none: this domain only).")
    String pc;

    @Mixin
    ClientSecurityOptions security;

    /** The security of these options, once made: its files are read once. */
    private Security made;

    /** A domain, {@value Name#DOMAIN_RULE}: any other value is a usage error that names it and the rule. */
    static final class DomainConverter implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            if (!Name.isDomain(value)) {
                throw new CommandLine.TypeConversionException("domain \"" + value + "\" is not " + Name.DOMAIN_RULE);
            }
            return value;
        }
    }

    /**
     * The security these options give (a usage error names what is wrong, or a registry URL that is not https
     * while it is on).
     */
    Security security(CommandLine.Model.CommandSpec spec) {
        if (made == null) {
            made = security.security(spec);
            registry.requireSecure(spec, made);
        }
        return made;
    }

    /**
     * {@code name}, checked to be a full name {@code LABEL@DOMAIN}: a bare label would be taken for a domain.
     *
     * @throws CommandLine.ParameterException naming the value and the name it probably means
     */
    String fullName(CommandLine.Model.CommandSpec spec, String what, String name) {
        int at = name.indexOf('@');
        Cli.check(spec, at > 0 && at < name.length() - 1, what + " \"" + name + "\" is not a full name"
                + " LABEL@DOMAIN: give the endpoint's name as registered, such as " + name.replace("@", "")
                + "@" + domain + " (gma query \"SELECT name FROM endpoints\" lists them)");
        Cli.check(spec, Name.isName(name), what + " \"" + name + "\" is not a name " + Name.NAME_RULE + ": label "
                + Name.LABEL_RULE + ", domain " + Name.DOMAIN_RULE);
        return name;
    }

    /** The builder with these options applied. */
    <T> EndpointBuilder<T> apply(EndpointBuilder<T> b, CommandLine.Model.CommandSpec spec) {
        b.registry(registry.url()).domain(domain).security(security(spec));
        if (pc != null && !pc.isEmpty()) {
            b.pcServlet(pc);
        }
        return b;
    }
}
