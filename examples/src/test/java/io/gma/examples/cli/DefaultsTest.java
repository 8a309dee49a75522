package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Flags, then the environment, then the properties file, then the option's own default. */
class DefaultsTest {
    private static PcCommand parse(Map<String, String> env, Properties file, String... args) {
        PcCommand pc = new PcCommand();
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
        PcCommand fromFile = parse(Map.of(), file);
        assertEquals("http://from-file:1", fromFile.registry.url);
        assertEquals(7001, fromFile.httpPort, "command.option before option");
        assertEquals("filed", fromFile.domain);
        assertEquals(8082, fromFile.uplinkPort, "the option's own default");

        PcCommand fromEnv = parse(Map.of("GMA_REGISTRY", "http://from-env:2", "GMA_PC_HTTP_PORT", "7003",
                "GMA_HTTP_PORT", "7004"), file);
        assertEquals("http://from-env:2", fromEnv.registry.url, "the environment before the file");
        assertEquals(7003, fromEnv.httpPort, "GMA_COMMAND_OPTION before GMA_OPTION");

        PcCommand fromFlags = parse(Map.of("GMA_REGISTRY", "http://from-env:2"), file, "--registry",
                "http://flag:3", "--http-port", "7005");
        assertEquals("http://flag:3", fromFlags.registry.url, "a flag before everything");
        assertEquals(7005, fromFlags.httpPort);
    }

    @Test
    void securityOptionsComeFromTheEnvironmentAndTheFileToo() {
        Properties file = new Properties();
        file.setProperty("client-auth", "need");
        file.setProperty("query.identity", "from-file");
        QueryCommand query = new QueryCommand();
        CommandLine cmd = new CommandLine(query);
        cmd.setDefaultValueProvider(new Defaults(Map.of("GMA_SECURITY", "/etc/gma", "GMA_QUERY_IDENTITY", "alice",
                "GMA_INSECURE", "false"), file));
        cmd.parseArgs("SELECT 1");
        assertEquals(java.nio.file.Path.of("/etc/gma"), query.security.dir);
        assertEquals("alice", query.security.identity, "the environment before the file");
        assertEquals("need", query.security.clientAuth);
        assertEquals(false, query.security.insecure);
    }
}
