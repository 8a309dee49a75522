package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
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
    void putsTheSameBytesBackToBackIntoOneArrayAndTouchesNothingElse() {
        byte[] into = new byte[64 * 1024];
        Arrays.fill(into, (byte) 0x5A);
        int at = 3;
        for (Vectors.Valid v : Vectors.valid()) {
            if (v.flags() != (v.command() == Command.REQUEST ? 1 : 0)) {
                continue;
            }
            Envelope e = Envelope.of(v.from(), v.to());
            assertEquals(v.bytes().length, e.packedLength(v.command(), v.data()), v.name());
            e.put(v.sequence(), v.command(), v.data(), into, at);
            assertArrayEquals(v.bytes(), Arrays.copyOfRange(into, at, at + v.bytes().length), v.name());
            assertEquals(v.bytes().length, Envelope.lengthAt(into, at), v.name() + ": its length, read back");
            at += v.bytes().length;
            assertEquals(0x5A, into[at], v.name() + ": a byte past the message was written");
        }
        Envelope e = Envelope.of("a@x", "b@x");
        byte[] small = new byte[e.packedLength(Command.DATA, new byte[10]) - 1];
        assertThrows(IndexOutOfBoundsException.class, () -> e.put(1, Command.DATA, new byte[10], small, 0));
        assertEquals(0, small[0], "a message that does not fit writes nothing");
        assertThrows(IndexOutOfBoundsException.class, () -> Envelope.lengthAt(into, into.length - 19),
                "a header past the end");
    }

    @Test
    void checksNamesOnceAndRulesEachTime() {
        assertEquals("from is 256 bytes in UTF-8, over the limit of 255", assertThrows(IllegalArgumentException.class,
                () -> Envelope.of("x".repeat(256), "b@x")).getMessage());
        assertEquals("HELLO must have an empty destination, but toLength is 3", assertThrows(
                IllegalArgumentException.class, () -> Envelope.of("a@x", "b@x").pack(0, Command.HELLO,
                        new byte[0])).getMessage());
        assertEquals("HELLO must have an empty destination, but toLength is 3", assertThrows(
                IllegalArgumentException.class, () -> Envelope.of("a@x", "b@x").packedLength(Command.HELLO,
                        new byte[0])).getMessage());
    }

    @Test
    void putsTheFlagsItIsGivenAsMessageOfDoesAndRefusesOthers() {
        Envelope e = Envelope.of("a@x", "b@x");
        byte[] data = {1, 2, 3};
        byte[] into = new byte[e.packedLength(Command.DATA, data)];
        // a DATA that asks for a receipt: the one flag of version 1, on a command other than REQUEST
        e.put(7, Command.DATA, Message.REPLY_EXPECTED, data, into, 0);
        assertArrayEquals(Message.of(Command.DATA, Message.REPLY_EXPECTED, "a@x", "b@x", 7, data).packed(), into);
        e.put(7, Command.DATA, 0, data, into, 0);
        assertArrayEquals(e.pack(7, Command.DATA, data), into);
        assertEquals("flags 0x02 has bits other than REPLY_EXPECTED (0x01)", assertThrows(
                IllegalArgumentException.class, () -> e.put(7, Command.DATA, 2, data, into, 0)).getMessage());
        assertEquals("REQUEST needs the REPLY_EXPECTED flag", assertThrows(IllegalArgumentException.class,
                () -> e.put(7, Command.REQUEST, 0, data, into, 0)).getMessage());
    }
}
