package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ErrorTextTest {
    @Test
    void formatsCodeSpaceSentence() {
        ErrorText e = new ErrorText(ErrorCode.NO_ROUTE, "no endpoint named \"cpu-7x2kqa@dsg\" is registered");
        assertEquals("NO_ROUTE no endpoint named \"cpu-7x2kqa@dsg\" is registered", e.text());
        assertEquals(e.text(), e.toString());
        assertArrayEquals(e.text().getBytes(StandardCharsets.US_ASCII), e.toBytes());
    }

    @Test
    void formatsAnEmptySentenceWithItsSpace() {
        assertEquals("TIMEOUT ", new ErrorText(ErrorCode.TIMEOUT, "").text());
    }

    @Test
    void formatsNonAsciiSentencesInUtf8() {
        ErrorText e = new ErrorText(ErrorCode.FORBIDDEN, "caf\u00e9 \u6c34 \ud83d\ude00");
        assertArrayEquals(new byte[] {'F', 'O', 'R', 'B', 'I', 'D', 'D', 'E', 'N', ' ', 'c', 'a', 'f', (byte) 0xC3,
            (byte) 0xA9, ' ', (byte) 0xE6, (byte) 0xB0, (byte) 0xB4, ' ', (byte) 0xF0, (byte) 0x9F, (byte) 0x98,
            (byte) 0x80}, e.toBytes());
        assertEquals(e, ErrorText.parse(new String(e.toBytes(), StandardCharsets.UTF_8)));
    }

    @Test
    void toBytesIsANewArrayEachTime() {
        ErrorText e = new ErrorText(ErrorCode.INTERNAL, "x");
        byte[] first = e.toBytes();
        first[0] = 'X';
        assertEquals('I', e.toBytes()[0]);
    }

    @Test
    void parsesWhatItFormatsForEveryCode() {
        for (ErrorCode code : ErrorCode.values()) {
            for (String sentence : new String[] {"", "one", "two words", " leading space", "trailing ",
                "MALFORMED inside", "line\nend", "\u00e9\u6c34"}) {
                ErrorText e = new ErrorText(code, sentence);
                assertEquals(e, ErrorText.parse(e.text()), e.text());
                assertEquals(e, ErrorText.parse(e.text(), ErrorCode.FORBIDDEN), e.text());
            }
        }
    }

    @Test
    void splitsAtTheFirstSpaceOnly() {
        assertEquals(new ErrorText(ErrorCode.QUEUE_FULL, "east is reading 1024 KiB"),
                ErrorText.parse("QUEUE_FULL east is reading 1024 KiB"));
        assertEquals(new ErrorText(ErrorCode.NO_ROUTE, " two spaces"), ErrorText.parse("NO_ROUTE  two spaces"));
    }

    @Test
    void readsACodeAloneAsThatCodeWithAnEmptySentence() {
        assertEquals(new ErrorText(ErrorCode.TIMEOUT, ""), ErrorText.parse("TIMEOUT"));
        assertEquals(new ErrorText(ErrorCode.TIMEOUT, ""), ErrorText.parse("TIMEOUT "));
    }

    @Test
    void readsAnUnknownCodeAsTheFallbackWithTheWholeText() {
        assertEquals(new ErrorText(ErrorCode.INTERNAL, "SLOW_DOWN please"), ErrorText.parse("SLOW_DOWN please"));
        assertEquals(new ErrorText(ErrorCode.FORBIDDEN, "SLOW_DOWN please"),
                ErrorText.parse("SLOW_DOWN please", ErrorCode.FORBIDDEN));
        // codes match exactly: case and surrounding white space count
        assertEquals(new ErrorText(ErrorCode.MALFORMED, "timeout x"),
                ErrorText.parse("timeout x", ErrorCode.MALFORMED));
        assertEquals(new ErrorText(ErrorCode.INTERNAL, "TIMEOUT\n"), ErrorText.parse("TIMEOUT\n"));
        assertEquals(new ErrorText(ErrorCode.INTERNAL, "TIMEOUT\tx"), ErrorText.parse("TIMEOUT\tx"));
    }

    @Test
    void readsAMissingCodeAsTheFallbackWithTheWholeText() {
        assertEquals(new ErrorText(ErrorCode.INTERNAL, ""), ErrorText.parse(""));
        assertEquals(new ErrorText(ErrorCode.INTERNAL, " TIMEOUT x"), ErrorText.parse(" TIMEOUT x"));
        assertEquals(new ErrorText(ErrorCode.TOO_LARGE, "<html>413</html>"),
                ErrorText.parse("<html>413</html>", ErrorCode.TOO_LARGE));
    }

    @Test
    void refusesNulls() {
        assertEquals("code", assertThrows(NullPointerException.class, () -> new ErrorText(null, "x")).getMessage());
        assertEquals("sentence", assertThrows(NullPointerException.class,
                () -> new ErrorText(ErrorCode.INTERNAL, null)).getMessage());
        assertThrows(NullPointerException.class, () -> ErrorText.parse(null));
        assertEquals("fallback", assertThrows(NullPointerException.class,
                () -> ErrorText.parse("x", null)).getMessage());
    }

    @Test
    void messageErrorAndProtocolExceptionUseTheSameText() {
        Message m = Message.error("pc@east", "cpu-7x2kqa@east", 7, ErrorCode.NO_ROUTE, "domain west is unknown");
        assertEquals("NO_ROUTE domain west is unknown", m.dataAsString());
        assertEquals(new ErrorText(ErrorCode.NO_ROUTE, "domain west is unknown"), ErrorText.parse(m.dataAsString()));
        ProtocolException p = new ProtocolException(ErrorCode.TOO_LARGE,
                "dataLength 70000 exceeds maxMessageBytes 65536");
        assertEquals("TOO_LARGE dataLength 70000 exceeds maxMessageBytes 65536", p.errorText());
    }
}
