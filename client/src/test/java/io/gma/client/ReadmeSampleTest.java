package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gma.registry.Registry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's code sample is this test's code: it compiles, it runs, and the README shows it unchanged. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReadmeSampleTest {
    private static final Path SOURCE = Path.of("src/test/java/io/gma/client/ReadmeSampleTest.java");
    private static final Path README = Path.of("../README.md");

    @Test
    void sampleRuns() throws Exception {
        LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            // README begin
            try (Producer cpu = Producer.builder().registry(url).domain("dsg").label("cpu").build();
                    Consumer collector = Consumer.builder().registry(url).domain("dsg").label("collector")
                            .onMessage(m -> events.add(m.from() + ": " + new String(m.data(), UTF_8))).build()) {
                var rows = collector.query("SELECT name FROM producers WHERE domain = 'dsg'").rows();
                collector.subscribe((String) rows.get(0).get(0), null).acknowledged().get();
                cpu.publish("load=0.73".getBytes(UTF_8));   // to every subscriber, over a direct TCP link
                System.out.println(events.take());            // cpu-k3x7qz@dsg: load=0.73
            }
            // README end
        }
        assertEquals(0, events.size());
    }

    @Test
    void readmeShowsTheSampleUnchanged() throws IOException {
        assumeTrue(Files.exists(README) && Files.exists(SOURCE), "run from the client module of a full clone");
        String source = Files.readString(SOURCE, UTF_8);
        String sample = source.substring(source.indexOf("// README begin\n") + "// README begin\n".length(),
                source.indexOf("            // README end"));
        String readme = Files.readString(README, UTF_8);
        String block = readme.substring(readme.indexOf("```java\n") + "```java\n".length());
        block = block.substring(0, block.indexOf("```"));
        assertEquals(sample.lines().map(line -> line.substring(12)).collect(Collectors.joining("\n", "", "\n")),
                block);
    }
}
