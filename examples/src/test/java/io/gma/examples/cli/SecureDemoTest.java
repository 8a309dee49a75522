package io.gma.examples.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.examples.agent.Collector;
import io.gma.wire.Name;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gma demo --secure}: TLS and signed tokens on every hop, with the keys {@code gma keys} makes. The
 * collector in swansea reads the agents of cardiff and of bangor (outbound-only, relayed by cardiff), so every
 * hop, the relay's poll included, authenticated.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SecureDemoTest {
    @Test
    void theSecureDemoCarriesEveryAgentsReadingsToTheCollector(@TempDir Path temp) throws Exception {
        Path keys = temp.resolve("keys");
        try (Demo demo = Demo.startSecure(Duration.ofMillis(200), keys)) {
            assertTrue(demo.registryUrl().startsWith("https://"), demo.registryUrl());
            Set<String> domains = new TreeSet<>();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
                for (Collector.Reading r : demo.collector().readings()) {
                    domains.add(Name.domainOf(r.agent()));
                }
                assertTrue(domains.size() >= 2, "readings came only from " + domains);
            });
            assertEquals(Set.of("bangor", "cardiff"), domains);
            // the gma select the demo prints, with its keys: the rules let the tables be declared, read and asked
            String select = demo.select("SELECT host, mount FROM host_disk");
            assertTrue(select.contains(" --security " + keys + " --identity collector "), select);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                GmaCommandsTest.Run rows = GmaCommandsTest.gma(GmaTest.args(select));
                assertEquals(0, rows.status(), rows.err());
                assertTrue(rows.out().matches("(?s)host +mount +producer +inserted\n.*\n\\S+/bangor +\\S+ +agent-"
                        + "[a-z2-7]{6}@bangor .*\n\\S+/cardiff +\\S+ +agent-[a-z2-7]{6}@cardiff .*"), rows.out());
            });
            assertTrue(demo.describe().contains("\n  dashboard  sign in with the token in " + keys.resolve(
                    "dashboard.token") + " (operator's, for 24 h; another: ./gma keys --dir " + keys + " --token"
                    + " operator)"), demo.describe());
        }
        for (String secret : new String[] {"agent.key", "collector.key", "cardiff.key", "swansea.key", "bangor.key",
            "operator.key", "dashboard.token"}) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keys.resolve(
                    secret))), secret);
        }
        assertTrue(Files.notExists(keys.resolve("domain.keys")), "no shared secret");
    }
}
