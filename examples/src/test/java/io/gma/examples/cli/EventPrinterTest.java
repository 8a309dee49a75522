package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

/** The three shapes tail and sub print a message in. */
class EventPrinterTest {
    private static final byte[] TEXT = "load=1\nmem=2\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] BINARY = {(byte) 0xff, 0x00, (byte) 0xfe};

    @Test
    void linesKeepTheirMillisecondsAlsoWhenTheyAreZero() throws Exception {
        Instant whole = LocalTime.of(14, 25, 28).atDate(java.time.LocalDate.of(2026, 11, 26))
                .atZone(ZoneId.systemDefault()).toInstant();
        assertEquals("14:25:28.000 feed@lan: load=1\n14:25:28.000 feed@lan: mem=2\n",
                EventPrinter.shape(EventPrinter.Format.LINES, whole, "feed@lan", TEXT));
        assertEquals("14:25:28.000 feed@lan: (3 bytes, not UTF-8)\n",
                EventPrinter.shape(EventPrinter.Format.LINES, whole, "feed@lan", BINARY));
    }

    @Test
    void rawIsTheTextWithALineEndAndBase64ForBytesThatAreNotText() throws Exception {
        Instant now = Instant.now();
        assertEquals("load=1\nmem=2\n", EventPrinter.shape(EventPrinter.Format.RAW, now, "f@l", TEXT));
        assertEquals("x\n", EventPrinter.shape(EventPrinter.Format.RAW, now, "f@l", new byte[] {'x'}));
        assertEquals("base64:/wD+\n", EventPrinter.shape(EventPrinter.Format.RAW, now, "f@l", BINARY));
    }

    @Test
    void jsonIsOneObjectALine() throws Exception {
        Instant at = Instant.parse("2026-11-26T12:00:00.123Z");
        assertEquals("{\"time\":\"2026-11-26T12:00:00.123Z\",\"from\":\"f@l\",\"data\":\"load=1\\nmem=2\\n\"}\n",
                EventPrinter.shape(EventPrinter.Format.JSON, at, "f@l", TEXT));
        assertEquals("{\"time\":\"2026-11-26T12:00:00.123Z\",\"from\":\"f@l\",\"base64\":\"/wD+\"}\n",
                EventPrinter.shape(EventPrinter.Format.JSON, at, "f@l", BINARY));
    }
}
