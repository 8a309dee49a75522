package io.gma.bench.codec;

import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** The jGMA field getters on a packed array; run with the gc profiler to see that they allocate nothing. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class PackedGetterBenchmark {
    private final byte[] packed = Packed.make(42, Command.DATA, CodecBenchmark.FROM, CodecBenchmark.TO,
            new byte[1024]);

    @Benchmark
    public String from() {
        return Packed.from(packed);
    }

    @Benchmark
    public String to() {
        return Packed.to(packed);
    }

    @Benchmark
    public long sequence() {
        return Packed.sequence(packed);
    }

    @Benchmark
    public Command command() {
        return Packed.command(packed);
    }

    @Benchmark
    public int dataLength() {
        return Packed.dataLength(packed);
    }
}
