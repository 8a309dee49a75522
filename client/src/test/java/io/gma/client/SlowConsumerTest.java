package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Producers in a JVM with a 64 MiB heap send flat out for 20 s to consumers that read 100 messages a second:
 * the queues stay within their bound, the heap holds, and each policy does what it says.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlowConsumerTest {
    private static final Pattern LINE = Pattern.compile("(\\w+) maxQueued=(\\d+) limit=(\\d+) sent=(\\d+) full=(\\d+)"
            + " shortestFullMillis=(-?\\d+) waits=(\\d+) drops=(\\d+)");

    @Test
    void boundedQueuesInASmallHeapUnderEachPolicy() throws Exception {
        try (DirectFixture f = new DirectFixture()) {
            List<Consumer> consumers = new ArrayList<>();
            List<String> args = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                    SlowConsumerDriver.class.getName(), f.registryUrl(), "20"));
            try {
                for (FullQueuePolicy policy : FullQueuePolicy.values()) {
                    Consumer c = f.consumer("slow-" + policy).onMessage(m -> {
                        if (m.command() == Command.DATA) {
                            Thread.sleep(10); // a deliberate pause, not a wait: 100 messages a second
                        }
                    }).build();
                    consumers.add(c);
                    args.add(policy + "=" + c.name());
                }
                Process driver = new ProcessBuilder(args).redirectErrorStream(true).start();
                List<String> out = new ArrayList<>();
                try (BufferedReader r = new BufferedReader(new InputStreamReader(driver.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null;) {
                        out.add(line);
                    }
                }
                assertTrue(driver.waitFor(60, TimeUnit.SECONDS), "driver still running");
                out.forEach(line -> System.out.println("driver: " + line));
                assertEquals(0, driver.exitValue(), String.join("\n", out));
                assertTrue(out.stream().noneMatch(l -> l.contains("OutOfMemoryError")), String.join("\n", out));
                Map<String, Matcher> byPolicy = new HashMap<>();
                for (String line : out) {
                    Matcher m = LINE.matcher(line);
                    if (m.matches()) {
                        byPolicy.put(m.group(1), m);
                    }
                }
                assertEquals(3, byPolicy.size(), String.join("\n", out));
                for (Matcher m : byPolicy.values()) {
                    long maxQueued = Long.parseLong(m.group(2));
                    assertTrue(maxQueued <= Long.parseLong(m.group(3)), m.group());
                    assertTrue(maxQueued > Long.parseLong(m.group(3)) / 2, "never filled: " + m.group());
                }
                // the consumer takes 100 a second and acknowledges each as it takes it: a BLOCK send waits for
                // room, which comes within tens of ms; one that fails (none, on a machine that keeps up) waited 500 ms
                Matcher block = byPolicy.get("BLOCK");
                assertTrue(Long.parseLong(block.group(7)) > 0, "BLOCK must wait for room: " + block.group());
                assertTrue(Long.parseLong(block.group(5)) == 0 || Long.parseLong(block.group(6)) >= 490,
                        "BLOCK must wait its 500 ms before it fails: " + block.group());
                Matcher fail = byPolicy.get("FAIL");
                assertTrue(Long.parseLong(fail.group(5)) > 1000 && Long.parseLong(fail.group(6)) < 50,
                        "FAIL must fail at once, often: " + fail.group());
                Matcher drop = byPolicy.get("DROP_OLDEST");
                assertTrue(Long.parseLong(drop.group(8)) > 1000 && Long.parseLong(drop.group(5)) == 0,
                        "DROP_OLDEST must never fail a send, and count its drops: " + drop.group());
            } finally {
                consumers.forEach(Consumer::close);
            }
        }
    }
}
