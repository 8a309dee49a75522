package io.gma.examples.cli;

import static io.gma.examples.cli.GmaCommandsTest.gma;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.registry.Registry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gma tail}, {@code pub}, {@code sub} and {@code request} against a real registry, PC servlets and
 * {@code gma pong}: tail and sub follow producers that start after them and drop those that stop, in one domain
 * and across two.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PubSubCommandsTest {
    @Test
    void tailFollowsAProducerThatStartsAfterItAndDropsItWhenItStops() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            // every endpoint, tail itself and the other tail among them: neither is subscribed to
            LiveGma tail = new LiveGma("tail", "--registry", url, "--refresh", "0.2", "SELECT name FROM endpoints");
            LiveGma json = new LiveGma("tail", "--json", "--registry", url, "--refresh", "0.2",
                    "SELECT name FROM producers WHERE label = 'feed'");
            tail.awaitErr("following 0 producers");
            json.awaitErr("following 0 producers");

            GmaCommandsTest.Run pub = gma("pub", "feed", "--registry", url, "--subscribers", "2", "one", "two",
                    "three");
            assertEquals(0, pub.status(), pub.err());
            assertTrue(pub.err().startsWith("pub is feed@lan\n"), pub.err());
            assertTrue(pub.err().contains("pub: 3 published, 3 acknowledged by subscribers, 0 to no subscriber,"
                    + " 0 failed\n"), pub.err());

            tail.awaitErr("feed@lan left");
            json.awaitErr("feed@lan left");
            assertEquals(0, tail.interrupt(), tail.err.toString());
            assertEquals(0, json.interrupt(), json.err.toString());

            String self = tail.err.toString().lines().findFirst().orElseThrow().replace("tail is ", "");
            assertTrue(self.matches("tail-[a-z2-7]{6}@lan"), tail.err.toString());
            assertFalse(tail.err.toString().contains(self + " is not a producer"), tail.err.toString());
            assertTrue(tail.err.toString().contains("subscribed to feed@lan\n"), tail.err.toString());
            assertTrue(tail.out.toString().matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} feed@lan: one\n"
                    + "\\d\\d:\\d\\d:\\d\\d\\.\\d{3} feed@lan: two\n\\d\\d:\\d\\d:\\d\\d\\.\\d{3} feed@lan: three\n"),
                    tail.out.toString());

            List<String> data = new ArrayList<>();
            for (String line : json.out.toString().split("\n")) {
                JsonNode event = new ObjectMapper().readTree(line);
                assertEquals("feed@lan", event.get("from").asText(), line);
                assertTrue(event.get("time").asText().matches("\\d{4}-\\d\\d-\\d\\dT.*Z"), line);
                data.add(event.get("data").asText());
            }
            assertEquals(List.of("one", "two", "three"), data);
        }
    }

    @Test
    void pubSubAndRequestInOneDomainAndAcrossTwo(@TempDir Path spools) throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            // spooled: what is left for an endpoint that is gone (a BYE to the stopped feed) stays in the spool
            LiveGma east = new LiveGma("pc", "--domain", "east", "--registry", url, "--http-port", "0",
                    "--uplink-port", "0", "--data-dir", spools.resolve("east").toString());
            LiveGma west = new LiveGma("pc", "--domain", "west", "--registry", url, "--http-port", "0",
                    "--uplink-port", "0", "--data-dir", spools.resolve("west").toString());
            String eastUplink = uplink(east);
            String westUplink = uplink(west);
            LiveGma pong = new LiveGma("pong", "--registry", url, "--domain", "east", "--pc", eastUplink);
            pong.awaitOut("pong is pong@east");

            GmaCommandsTest.Run near = gma("request", "pong@east", "in east", "--registry", url, "--domain", "east",
                    "--pc", eastUplink);
            assertEquals(0, near.status(), near.err());
            assertEquals("in east\n", near.out());
            GmaCommandsTest.Run far = gma("request", "pong@east", "from west", "--registry", url, "--domain", "west",
                    "--pc", westUplink);
            assertEquals(0, far.status(), far.err());
            assertEquals("from west\n", far.out());
            GmaCommandsTest.Run nobody = gma("request", "nobody@east", "x", "--registry", url, "--domain", "east",
                    "-W", "2");
            assertEquals(1, nobody.status(), nobody.out());
            assertTrue(nobody.err().startsWith("gma request: no reply from nobody@east: NO_ROUTE "), nobody.err());

            LiveGma subEast = new LiveGma("sub", "feed", "--registry", url, "--domain", "east", "--pc",
                    eastUplink, "--refresh", "0.2");
            LiveGma subWest = new LiveGma("sub", "feed@east", "--registry", url, "--domain", "west", "--pc",
                    westUplink, "--refresh", "0.2");
            subEast.awaitErr("following 0 producers");
            subWest.awaitErr("following 0 producers");
            GmaCommandsTest.Run pub = gma("pub", "feed@east", "--registry", url, "--domain", "east", "--pc",
                    eastUplink, "--subscribers", "2", "alpha", "beta");
            assertEquals(0, pub.status(), pub.err());
            subEast.awaitErr("feed@east left");
            subWest.awaitErr("feed@east left");
            assertEquals(0, subEast.interrupt());
            assertEquals(0, subWest.interrupt());
            assertEquals("alpha\nbeta\n", subEast.out.toString());
            assertEquals("alpha\nbeta\n", subWest.out.toString());

            assertEquals(0, pong.interrupt(), pong.err.toString());
            assertEquals(0, east.interrupt(), east.err.toString());
            assertEquals(0, west.interrupt(), west.err.toString());
        }
    }

    @Test
    void pubPublishesEachLineOfStdinAsAShellPipeGivesIt() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            LiveGma sub = new LiveGma("sub", "feed@lan", "--registry", registry.url(), "--refresh", "0.2");
            sub.awaitErr("following 0 producers");
            GmaProcess.Run pub = GmaProcess.run(java.util.Map.of(), "first line\nsecond line\n".getBytes(
                    java.nio.charset.StandardCharsets.UTF_8), "pub", "feed", "--registry", registry.url());
            assertEquals(0, pub.status(), pub.err());
            assertTrue(pub.err().contains("pub: 2 published, 2 acknowledged by subscribers, 0 to no subscriber,"
                    + " 0 failed\n"), pub.err());
            sub.awaitErr("feed@lan left");
            assertEquals(0, sub.interrupt());
            assertEquals("first line\nsecond line\n", sub.out.toString());
        }
    }

    @Test
    void pubWithoutSubscribersSaysSoAndPublishesNothing() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            GmaCommandsTest.Run pub = gma("pub", "lonely", "--registry", registry.url(), "--wait", "0.5", "x");
            assertEquals(1, pub.status(), pub.err());
            assertTrue(pub.err().contains("pub: 1 subscribers wanted, 0 came within 0.5 s: nothing was published"
                    + " (gma sub lonely@lan, or a gma tail that names it, subscribes)"), pub.err());
        }
    }

    @Test
    void namesThatAreNotEndpointNamesAreUsageErrors() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            try (var pong = io.gma.examples.Pong.start(url, "lan", "pong")) {
                GmaCommandsTest.Run ports = gma("tail", "--registry", url, "SELECT port FROM endpoints");
                assertEquals(2, ports.status(), ports.err());
                assertTrue(ports.err().matches("(?s).*\nthe query's first column"
                        + " \\((?i:port)\\) holds \"\\d+\", not an endpoint name <label>\\[-<nonce>]@<domain>: select"
                        + " the name, as in SELECT name FROM producers WHERE \\.\\.\\..*"), ports.err());
            }
            GmaCommandsTest.Run bare = gma("request", "feed", "x", "--registry", url, "--domain", "east");
            assertEquals(2, bare.status(), bare.err());
            assertTrue(bare.err().contains("NAME \"feed\" is not a full name LABEL@DOMAIN: give the endpoint's name"
                    + " as registered, such as feed@east"), bare.err());
            GmaCommandsTest.Run bad = gma("sub", "no way", "--registry", url, "--domain", "east");
            assertEquals(2, bad.status(), bad.err());
            assertTrue(bad.err().contains("NAME \"no way@east\" is not a name <label>[-<nonce>]@<domain>"),
                    bad.err());
            GmaCommandsTest.Run elsewhere = gma("pub", "feed@east", "--registry", url, "--domain", "west", "x");
            assertEquals(2, elsewhere.status(), elsewhere.err());
            assertTrue(elsewhere.err().contains("NAME feed@east is in domain east, not --domain west: give --domain"
                    + " east"), elsewhere.err());
        }
    }

    /** The uplink address a gma pc prints in its first line. */
    static String uplink(LiveGma pc) {
        pc.awaitOut("\n");
        String line = pc.out.toString().lines().findFirst().orElseThrow();
        return line.substring(line.lastIndexOf(' ') + 1).strip();
    }
}
