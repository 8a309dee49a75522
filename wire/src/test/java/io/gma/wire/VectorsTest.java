package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class VectorsTest {
    private final WireCodec codec = WireCodec.standard();

    static Stream<Vectors.Valid> valid() {
        return Vectors.valid().stream();
    }

    static Stream<Vectors.Invalid> invalid() {
        return Vectors.invalid().stream();
    }

    @Test
    void copyMatchesTheSharedVectors() throws IOException {
        // surefire runs in the module folder: the repository is its parent, shared/ sits beside that
        Path shared = Path.of("").toAbsolutePath().getParent().resolve("../shared/design/vectors/messages.json")
                .normalize();
        assumeTrue(Files.exists(shared), "no " + shared + " beside this clone: nothing to compare the copy with");
        try (InputStream copy = VectorsTest.class.getResourceAsStream(Vectors.RESOURCE)) {
            assertArrayEquals(Files.readAllBytes(shared), copy.readAllBytes(),
                    "wire/src/test/resources/vectors/messages.json differs from " + shared + ": copy it again");
        }
    }

    @Test
    void vectorFileHasEveryKind() {
        assertEquals(12, Vectors.valid().size());
        assertEquals(8, Vectors.invalid().size());
    }

    @ParameterizedTest
    @MethodSource("valid")
    void encoderGivesTheExactBytes(Vectors.Valid v) {
        assertEquals(HexFormat.of().formatHex(v.bytes()), HexFormat.of().formatHex(codec.encode(v.message())));
        ByteBuffer buffer = ByteBuffer.allocate(v.bytes().length + 3);
        buffer.put((byte) 9);
        codec.encode(v.message(), buffer);
        assertEquals(v.bytes().length + 1, buffer.position());
        assertArrayEquals(v.bytes(), java.util.Arrays.copyOfRange(buffer.array(), 1, buffer.position()));
    }

    @ParameterizedTest
    @MethodSource("valid")
    void packedMakeGivesTheExactBytes(Vectors.Valid v) {
        assumeTrue(v.flags() == (v.command() == Command.REQUEST ? 1 : 0));
        assertArrayEquals(v.bytes(), Packed.make(v.sequence(), v.command(), v.from(), v.to(), v.data()));
        assertArrayEquals(v.bytes(), Packed.marshal(v.message()));
    }

    @ParameterizedTest
    @MethodSource("valid")
    void decoderReadsTheFields(Vectors.Valid v) throws ProtocolException {
        Message m = codec.decode(v.bytes());
        assertSame(v.command(), m.command());
        assertEquals(v.flags(), m.flags());
        assertEquals(v.from(), m.from());
        assertEquals(v.to(), m.to());
        assertEquals(v.sequence(), m.sequence());
        assertArrayEquals(v.data(), m.data());
        assertEquals(v.bytes().length, m.encodedLength());
        assertEquals(v.message(), m);
    }

    @ParameterizedTest
    @MethodSource("valid")
    void packedGettersReadTheFields(Vectors.Valid v) throws ProtocolException {
        byte[] p = v.bytes();
        assertSame(v.command(), Packed.command(p));
        assertEquals(v.flags(), Packed.flags(p));
        assertEquals(v.from(), Packed.from(p));
        assertEquals(v.to(), Packed.to(p));
        assertEquals(v.sequence(), Packed.sequence(p));
        assertArrayEquals(v.data(), Packed.data(p));
        assertEquals(v.data().length, Packed.dataLength(p));
        assertEquals(v.message(), Packed.unmarshal(p));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void decoderRefusesInvalidWithItsCode(Vectors.Invalid v) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> codec.decode(v.bytes()));
        assertEquals(v.error(), e.code(), e.getMessage());
        assertThrows(ProtocolException.class, () -> Packed.unmarshal(v.bytes()));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void streamDecoderRefusesInvalidWithItsCode(Vectors.Invalid v) {
        StreamDecoder decoder = codec.newStreamDecoder();
        List<Message> out = new ArrayList<>();
        ProtocolException e = assertThrows(ProtocolException.class, () -> {
            decoder.feed(v.bytes(), 0, v.bytes().length, out::add);
            decoder.finish();
        });
        assertEquals(v.error(), e.code(), e.getMessage());
        assertTrue(out.isEmpty(), "delivered " + out);
    }

    @Test
    void tooLargeNamesTheValueAndTheLimit() {
        Vectors.Invalid tooLarge = Vectors.invalid().stream().filter(v -> v.name().equals("too-large")).findFirst()
                .orElseThrow();
        ProtocolException e = assertThrows(ProtocolException.class, () -> codec.decode(tooLarge.bytes()));
        assertEquals("dataLength 2147483648 exceeds maxMessageBytes 16777216", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, Integer.MAX_VALUE})
    void streamDecodesFourMessagesInAnyChunking(int chunk) throws ProtocolException {
        byte[] stream = Vectors.stream();
        StreamDecoder decoder = codec.newStreamDecoder();
        List<Message> out = new ArrayList<>();
        for (int off = 0; off < stream.length; off += Math.min(chunk, stream.length - off)) {
            decoder.feed(stream, off, Math.min(chunk, stream.length - off), out::add);
        }
        decoder.finish();
        assertEquals(Vectors.streamCount(), out.size());
        List<Vectors.Valid> valid = Vectors.valid();
        for (int i = 0; i < out.size(); i++) {
            assertEquals(valid.get(i).message(), out.get(i), "message " + i);
        }
    }
}
