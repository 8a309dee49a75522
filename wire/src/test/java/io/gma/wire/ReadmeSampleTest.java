package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's code sample is this test's code: it compiles, it runs, and the README shows it unchanged. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReadmeSampleTest {
    private static final Path SOURCE = Path.of("src/test/java/io/gma/wire/ReadmeSampleTest.java");
    private static final Path README = Path.of("../README.md");

    @Test
    void sampleRuns() throws ProtocolException {
        List<Message> received = new ArrayList<>();
        // README begin
        WireCodec codec = WireCodec.standard();
        byte[] packed = Packed.make(42, Command.DATA, "cpu-agent-k3x9qz@dsg", "collector@dsg", "load=0.73");
        Message message = codec.decode(packed);               // checked against the protocol and the 16 MiB limit
        StreamDecoder stream = codec.newStreamDecoder();       // chunks of any size, as a socket delivers them
        stream.feed(packed, 0, packed.length, received::add);
        String to = Packed.to(packed);                         // jGMA's getters read the packed array in place
        // README end
        assertEquals(List.of(message), received);
        assertEquals("collector@dsg", to);
        assertEquals("load=0.73", message.dataAsString());
    }

    @Test
    void readmeShowsTheSampleUnchanged() throws IOException {
        assumeTrue(Files.exists(README) && Files.exists(SOURCE), "run from the wire module of a full clone");
        String source = Files.readString(SOURCE, StandardCharsets.UTF_8);
        String sample = source.substring(source.indexOf("// README begin\n") + "// README begin\n".length(),
                source.indexOf("        // README end"));
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        String block = readme.substring(readme.indexOf("```java\n") + "```java\n".length());
        block = block.substring(0, block.indexOf("```"));
        assertEquals(sample.lines().map(line -> line.substring(8)).collect(Collectors.joining("\n", "", "\n")), block);
    }
}
