package io.gma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Flags, then the environment, then the properties file, then the option's own default. */
class DefaultsTest {
    /** Options as gma pc has them: its own, and the shared --registry. */
    @Command(name = "pc")
    static final class PcLike {
        @Option(names = "--domain")
        String domain;

        @Mixin
        RegistryOption registry;

        @Option(names = "--http-port", defaultValue = "8081")
        int httpPort;

        @Option(names = "--uplink-port", defaultValue = "8082")
        int uplinkPort;
    }

    /** Options as gma query has them: a client's, with the shared security options. */
    @Command(name = "query")
    static final class QueryLike {
        @Parameters(paramLabel = "SQL")
        String sql;

        @Mixin
        RegistryOption registry;

        @Mixin
        SecurityOptions security;
    }

    private static PcLike parse(Map<String, String> env, Properties file, String... args) {
        PcLike pc = new PcLike();
        CommandLine cmd = new CommandLine(pc);
        cmd.setDefaultValueProvider(new Defaults(env, file));
        cmd.parseArgs(args);
        return pc;
    }

    @Test
    void flagsThenEnvironmentThenFileThenDefault() {
        Properties file = new Properties();
        file.setProperty("registry", "http://from-file:1");
        file.setProperty("pc.http-port", "7001");
        file.setProperty("http-port", "7002");
        file.setProperty("domain", "filed");
        PcLike fromFile = parse(Map.of(), file);
        assertEquals("http://from-file:1", fromFile.registry.url);
        assertEquals(7001, fromFile.httpPort, "command.option before option");
        assertEquals("filed", fromFile.domain);
        assertEquals(8082, fromFile.uplinkPort, "the option's own default");

        PcLike fromEnv = parse(Map.of("GMA_REGISTRY", "http://from-env:2", "GMA_PC_HTTP_PORT", "7003",
                "GMA_HTTP_PORT", "7004"), file);
        assertEquals("http://from-env:2", fromEnv.registry.url, "the environment before the file");
        assertEquals(7003, fromEnv.httpPort, "GMA_COMMAND_OPTION before GMA_OPTION");

        PcLike fromFlags = parse(Map.of("GMA_REGISTRY", "http://from-env:2"), file, "--registry",
                "http://flag:3", "--http-port", "7005");
        assertEquals("http://flag:3", fromFlags.registry.url, "a flag before everything");
        assertEquals(7005, fromFlags.httpPort);
    }

    @Test
    void securityOptionsComeFromTheEnvironmentAndTheFileToo() {
        Properties file = new Properties();
        file.setProperty("client-auth", "need");
        file.setProperty("query.identity", "from-file");
        QueryLike query = new QueryLike();
        CommandLine cmd = new CommandLine(query);
        cmd.setDefaultValueProvider(new Defaults(Map.of("GMA_SECURITY", "/etc/gma", "GMA_QUERY_IDENTITY", "alice",
                "GMA_INSECURE", "false"), file));
        cmd.parseArgs("SELECT 1");
        assertEquals(java.nio.file.Path.of("/etc/gma"), query.security.client.dir);
        assertEquals("alice", query.security.client.identity, "the environment before the file");
        assertEquals("need", query.security.clientAuth);
        assertEquals(false, query.security.insecure);
    }

    @Test
    void aCommandShownUnderAnotherNameReadsTheKeysOfItsOwnName() {
        Properties file = new Properties();
        file.setProperty("pc.uplink-port", "7006");
        PcLike pc = new PcLike();
        CommandLine cmd = Cli.standalone(pc, "java -jar gma-pcservlet.jar");
        cmd.setDefaultValueProvider(new Defaults(Map.of("GMA_PC_HTTP_PORT", "7007", "GMA_PC_REGISTRY",
                "http://from-env:4"), file));
        cmd.parseArgs();
        assertEquals("java -jar gma-pcservlet.jar", cmd.getCommandSpec().qualifiedName());
        assertEquals(7007, pc.httpPort);
        assertEquals(7006, pc.uplinkPort);
        assertEquals("http://from-env:4", pc.registry.url(), "a mixin's option, under the command's name");
    }

    @Test
    void settingsNoCommandTakesAreNamedWithTheNearestThatOneDoes() {
        Properties file = new Properties();
        file.setProperty("registy", "http://x:1");
        file.setProperty("pc.htp-port", "7000");
        file.setProperty("pc.http-port", "7001");
        file.setProperty("registry", "http://x:2");
        file.setProperty("zzzzzzzzzzzz", "1");
        Defaults d = new Defaults(Map.of("GMA_DOMIAN", "east", "GMA_PC_HTTP_PORT", "1", "GMA_REQUIRE_TMPFS", "1",
                "GMA_QUERY_IDENTITY", "alice", "PATH", "/bin"), file);
        CommandLine pc = new CommandLine(new PcLike());
        CommandLine query = new CommandLine(new QueryLike());
        List<String> unknown = d.unknown(List.of(pc, query));
        assertEquals(List.of(
                "the environment variable GMA_DOMIAN is no setting of any command (did you mean GMA_DOMAIN?); ignored",
                "the key pc.htp-port in the properties file is no setting of any command (did you mean"
                        + " pc.http-port?); ignored",
                "the key registy in the properties file is no setting of any command (did you mean registry?);"
                        + " ignored",
                "the key zzzzzzzzzzzz in the properties file is no setting of any command (gma COMMAND --help lists"
                        + " them); ignored"),
                unknown);
    }

    @Test
    void distanceCountsEdits() {
        assertEquals(0, Defaults.distance("registry", "registry"));
        assertEquals(1, Defaults.distance("registy", "registry"));
        assertEquals(2, Defaults.distance("domian", "domain"));
        assertEquals(3, Defaults.distance("", "abc"));
    }

    @Test
    void aValueIsNamedByWhereItCameFrom() {
        Properties file = new Properties();
        file.setProperty("pc.uplink-port", "7006");
        Defaults d = new Defaults(Map.of("GMA_PC_HTTP_PORT", "7007", "GMA_REGISTRY", "http://x:1"), file);
        CommandLine cmd = new CommandLine(new PcLike());
        assertEquals("GMA_PC_HTTP_PORT", d.sourceOf(cmd.getCommandSpec().findOption("--http-port")));
        assertEquals("GMA_REGISTRY", d.sourceOf(cmd.getCommandSpec().findOption("--registry")));
        assertEquals("key pc.uplink-port", d.sourceOf(cmd.getCommandSpec().findOption("--uplink-port")));
        assertEquals(null, d.sourceOf(cmd.getCommandSpec().findOption("--domain")));
    }
}
