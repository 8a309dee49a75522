package io.gma.bench.codec;

import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.WireCodec;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Encode and decode of single messages of 64 B, 1 KB and 32 KB of data, next to the baseline: one
 * {@code System.arraycopy} of the same number of bytes into an existing array.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class CodecBenchmark {
    static final String FROM = "cpu-agent-k3x9qz@dsg";
    static final String TO = "collector-7aa2mq@dsg";

    @Param({"64", "1024", "32768"})
    public int dataBytes;

    private final WireCodec codec = WireCodec.standard();
    private byte[] data;
    private Message message;
    private byte[] encoded;
    private byte[] copyTarget;
    private ByteBuffer buffer;

    @Setup
    public void setUp() {
        data = new byte[dataBytes];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        message = Message.of(Command.DATA, FROM, TO, 42, data);
        encoded = codec.encode(message);
        copyTarget = new byte[encoded.length];
        buffer = ByteBuffer.allocate(encoded.length);
    }

    /** Fields to packed bytes: the jGMA call "make message", one allocation and one copy of the data. */
    @Benchmark
    public byte[] encodeFromFields() {
        return Packed.make(42, Command.DATA, FROM, TO, data);
    }

    /** An existing Message into an existing buffer, as a socket writer does. */
    @Benchmark
    public ByteBuffer encodeIntoBuffer() {
        buffer.clear();
        codec.encode(message, buffer);
        return buffer;
    }

    /** Bytes to a checked Message: header checks, names (cached), one allocation and one copy. */
    @Benchmark
    public Message decode() throws ProtocolException {
        return codec.decode(encoded);
    }

    /** Baseline: the memory-bandwidth limit for the same bytes. */
    @Benchmark
    public byte[] baselineArraycopy() {
        System.arraycopy(encoded, 0, copyTarget, 0, encoded.length);
        return copyTarget;
    }
}
