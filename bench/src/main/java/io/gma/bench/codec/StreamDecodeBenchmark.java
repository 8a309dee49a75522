package io.gma.bench.codec;

import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The stream decoder over 64 MiB of messages with 1 KB of data, fed in 64 KB chunks as socket reads would
 * deliver them, next to the baseline: arraycopy of the same 64 MiB in the same chunks. One operation is the
 * whole 64 MiB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class StreamDecodeBenchmark {
    public static final int STREAM_BYTES = 64 * 1024 * 1024;
    static final int CHUNK = 64 * 1024;

    private final WireCodec codec = WireCodec.standard();
    private byte[] stream;
    private byte[] target;
    private int messages;

    @Setup
    public void setUp() {
        byte[] data = new byte[1024];
        byte[] one = codec.encode(Message.of(Command.DATA, CodecBenchmark.FROM, CodecBenchmark.TO, 1, data));
        messages = STREAM_BYTES / one.length;
        stream = new byte[STREAM_BYTES];
        for (int i = 0; i < messages; i++) {
            System.arraycopy(one, 0, stream, i * one.length, one.length);
        }
        // the tail that does not hold a whole message is left out of both measurements
        stream = Arrays.copyOf(stream, messages * one.length);
        target = new byte[stream.length];
    }

    @Benchmark
    public int streamDecode(Blackhole hole) throws ProtocolException {
        StreamDecoder decoder = codec.newStreamDecoder();
        int[] count = {0};
        for (int off = 0; off < stream.length; off += CHUNK) {
            decoder.feed(stream, off, Math.min(CHUNK, stream.length - off), m -> {
                hole.consume(m);
                count[0]++;
            });
        }
        decoder.finish();
        if (count[0] != messages) {
            throw new IllegalStateException(count[0] + " messages decoded, expected " + messages);
        }
        return count[0];
    }

    @Benchmark
    public byte[] baselineArraycopy() {
        for (int off = 0; off < stream.length; off += CHUNK) {
            System.arraycopy(stream, off, target, off, Math.min(CHUNK, stream.length - off));
        }
        return target;
    }
}
