package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MessageTest {
    private static final byte[] NONE = new byte[0];

    private static String refusal(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void copiesTheCallersData() {
        byte[] data = {1, 2, 3};
        Message m = Message.of(Command.DATA, "a@x", "b@x", 1, data);
        data[0] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, m.data());
        m.data()[1] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, m.data());
    }

    @Test
    void dataBufferIsReadOnlyViewOfTheData() {
        Message m = Message.of(Command.DATA, "a@x", "b@x", 1, new byte[] {5, 6});
        ByteBuffer view = m.dataBuffer();
        assertEquals(0, view.position());
        assertEquals(2, view.remaining());
        assertEquals(5, view.get(0));
        assertThrows(ReadOnlyBufferException.class, () -> view.put(0, (byte) 1));
    }

    @Test
    void requestGetsReplyExpectedByDefault() {
        Message m = Message.of(Command.REQUEST, "a@x", "b@x", 1, NONE);
        assertTrue(m.replyExpected());
        assertEquals(Message.REPLY_EXPECTED, m.flags());
        assertFalse(Message.of(Command.DATA, "a@x", "b@x", 1, NONE).replyExpected());
    }

    @Test
    void refusesRequestWithoutReplyExpected() {
        assertEquals("REQUEST needs the REPLY_EXPECTED flag",
                refusal(() -> Message.of(Command.REQUEST, 0, "a@x", "b@x", 1, NONE)));
    }

    @Test
    void refusesUnknownFlags() {
        assertEquals("flags 0x02 has bits other than REPLY_EXPECTED (0x01)",
                refusal(() -> Message.of(Command.DATA, 2, "a@x", "b@x", 1, NONE)));
    }

    @Test
    void refusesNameLongerThan255Bytes() {
        String name = "é".repeat(128); // 256 bytes in UTF-8
        assertEquals("from is 256 bytes in UTF-8, over the limit of 255",
                refusal(() -> Message.of(Command.DATA, name, "b@x", 1, NONE)));
        assertEquals(255, Message.of(Command.DATA, "x" + "é".repeat(127), "b@x", 1, NONE).from()
                .getBytes(StandardCharsets.UTF_8).length);
    }

    @Test
    void refusesUnpairedSurrogate() {
        assertEquals("to has an unpaired surrogate U+D800 at index 1",
                refusal(() -> Message.of(Command.DATA, "a@x", "b\uD800@x", 1, NONE)));
        assertEquals("b\uD83D\uDE00@x", Message.of(Command.DATA, "a@x", "b\uD83D\uDE00@x", 1, NONE).to());
    }

    @Test
    void refusesEmptyNamesWhereTheCommandNeedsThem() {
        assertEquals("DATA needs a sender name, but fromLength is 0",
                refusal(() -> Message.of(Command.DATA, "", "b@x", 1, NONE)));
        assertEquals("APP_0x41 needs a destination name, but toLength is 0",
                refusal(() -> Message.of(Command.application(0x41), "a@x", "", 1, NONE)));
        Message.of(Command.ERROR, "", "", 1, NONE);
        Message.of(Command.PING, "", "", 0, NONE);
    }

    @Test
    void refusesHelloWithDestination() {
        assertEquals("HELLO must have an empty destination, but toLength is 3",
                refusal(() -> Message.of(Command.HELLO, "a@x", "b@x", 0, NONE)));
    }

    @Test
    void refusesAckWithoutEightBytes() {
        assertEquals("ACK dataLength 4 is not 8", refusal(() -> Message.of(Command.ACK, "a", "b", 0, new byte[4])));
    }

    @Test
    void errorCarriesCodeAndSentence() {
        Message m = Message.error("gw@remote", "ping-2q7zzz@lan", 9, ErrorCode.NO_ROUTE,
                "no endpoint named \"x-aaaaaa@remote\" is registered");
        assertSame(Command.ERROR, m.command());
        assertEquals("NO_ROUTE no endpoint named \"x-aaaaaa@remote\" is registered", m.dataAsString());
    }

    @Test
    void sequenceIsUnsigned() {
        Message m = Message.of(Command.DATA, "a@x", "b@x", -1L, NONE);
        assertEquals(-1L, m.sequence());
        assertEquals("DATA #18446744073709551615 a@x -> b@x, 0 bytes", m.toString());
    }

    @Test
    void equalMessagesHaveEqualBytes() {
        Message a = Message.of(Command.DATA, "a@x", "b@x", 1, new byte[] {1});
        assertEquals(a, Message.of(Command.DATA, "a@x", "b@x", 1, new byte[] {1}));
        assertEquals(a.hashCode(), Message.of(Command.DATA, "a@x", "b@x", 1, new byte[] {1}).hashCode());
        assertNotEquals(a, Message.of(Command.DATA, "a@x", "b@x", 2, new byte[] {1}));
    }

    @Test
    void decodingIgnoresUnknownFlagsAndReservedByte() throws ProtocolException {
        byte[] bytes = Packed.make(1, Command.DATA, "a@x", "b@x", "hi");
        bytes[4] = (byte) 0xFE;
        bytes[7] = (byte) 0x55;
        Message m = WireCodec.standard().decode(bytes);
        assertEquals(0, m.flags());
        assertEquals(Message.of(Command.DATA, "a@x", "b@x", 1, "hi".getBytes(StandardCharsets.UTF_8)), m);
    }

    @Test
    void commandsHaveOneInstancePerCode() {
        assertSame(Command.DATA, Command.of(1));
        assertSame(Command.application(0x41), Command.of(0x41));
        assertTrue(Command.application(0xFF).isApplication());
        assertFalse(Command.BYE.isApplication());
        assertEquals("command 0x09 is reserved", refusal(() -> Command.of(9)));
        assertEquals("application command 0x3F is outside 0x40..0xFF", refusal(() -> Command.application(0x3F)));
    }

    @Test
    void codecRefusesLimitOutOfRange() {
        assertEquals("maxMessageBytes 7 is outside 8.." + Message.MAX_DATA_BYTES,
                refusal(() -> WireCodec.withMaxMessageBytes(7)));
        assertEquals(16 << 20, WireCodec.standard().maxMessageBytes());
    }
}
