package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EnvelopeTest {
    @Test
    void packsTheSameBytesAsPackedMake() {
        for (Vectors.Valid v : Vectors.valid()) {
            if (v.flags() != (v.command() == Command.REQUEST ? 1 : 0)) {
                continue;
            }
            assertArrayEquals(v.bytes(), Envelope.of(v.from(), v.to()).pack(v.sequence(), v.command(), v.data()),
                    v.name());
        }
    }

    @Test
    void checksNamesOnceAndRulesEachTime() {
        assertEquals("from is 256 bytes in UTF-8, over the limit of 255", assertThrows(IllegalArgumentException.class,
                () -> Envelope.of("x".repeat(256), "b@x")).getMessage());
        assertEquals("HELLO must have an empty destination, but toLength is 3", assertThrows(
                IllegalArgumentException.class, () -> Envelope.of("a@x", "b@x").pack(0, Command.HELLO,
                        new byte[0])).getMessage());
    }
}
