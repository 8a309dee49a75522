package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.RegistryOption;
import io.gma.cli.Running;
import io.gma.cli.SecurityOptions;
import io.gma.pcservlet.PcServlet;
import io.gma.security.Security;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma pc}. */
@Command(name = "pc", mixinStandardHelpOptions = true, header = "Runs the PC servlet of a domain.",
        description = "Runs the PC servlet of a domain until Ctrl-C (or --duration): its endpoints open uplinks"
                + " to it (--pc HOST:UPLINK-PORT), and it tunnels their traffic to other domains by HTTP POST.")
final class PcCommand implements Callable<Integer> {
    @Option(names = "--domain", description = "The domain served (required).")
    String domain;

    @Mixin
    RegistryOption registry;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address both listeners bind (default"
            + " ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--http-port", defaultValue = "8081", description = "HTTP port (default ${DEFAULT-VALUE}).")
    int httpPort;

    @Option(names = "--uplink-port", defaultValue = "8082", description = "Uplink port (default"
            + " ${DEFAULT-VALUE}).")
    int uplinkPort;

    @Option(names = "--via", paramLabel = "DOMAIN", description = "Outbound-only: post to and poll DOMAIN's PC"
            + " servlet, which relays.")
    String via;

    @Option(names = "--url", description = "The URL registered for the domain (default http://HOST:HTTP-PORT).")
    String url;

    @Mixin
    SecurityOptions security;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, domain != null, "--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain)");
        Security secure = security.security(spec, domain, host);
        registry.requireSecure(spec, secure);
        PcServlet.Builder b = PcServlet.builder(domain, registry.url()).host(host).httpPort(httpPort)
                .uplinkPort(uplinkPort).security(secure);
        if (via != null) {
            b.via(via);
        }
        if (url != null) {
            b.publicUrl(url);
        }
        PcServlet pc = b.start();
        spec.commandLine().getOut().println("GMA PC servlet of " + pc.domain() + (via == null ? " at " + pc.url()
                : " (outbound-only, via " + via + ")") + ", uplinks at " + pc.uplink());
        Running.until(duration.seconds(), null, pc);
        return 0;
    }
}
