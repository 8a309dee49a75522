package io.gma.bench.codec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs the codec benchmarks with the gc profiler and prints a Markdown table: ops/s, MB/s, bytes allocated
 * per operation, and each result's ratio to the arraycopy baseline of the same run. Arguments are passed
 * to JMH as a benchmark name filter (default: every codec benchmark).
 */
public final class CodecReport {
    private static final double MIB = 1024.0 * 1024.0;

    private CodecReport() {
    }

    public static void main(String[] args) throws RunnerException {
        OptionsBuilder options = new OptionsBuilder();
        options.include(args.length > 0 ? args[0] : CodecReport.class.getPackageName() + ".*Benchmark");
        options.addProfiler("gc");
        Collection<RunResult> results = new Runner(options.build()).run();
        System.out.println();
        System.out.println(table(results));
    }

    static String table(Collection<RunResult> results) {
        List<String> rows = new ArrayList<>();
        rows.add("| benchmark | data bytes | ops/s | MB/s | alloc B/op | vs arraycopy |");
        rows.add("|---|---|---|---|---|---|");
        for (RunResult run : results) {
            double ops = run.getPrimaryResult().getScore();
            double bytesPerOp = bytesPerOp(run);
            double baseline = baselineOps(results, run);
            rows.add(String.format(Locale.ROOT, "| %s | %s | %,.0f | %s | %s | %s |", method(run), size(run), ops,
                    bytesPerOp > 0 ? String.format(Locale.ROOT, "%,.0f", ops * bytesPerOp / MIB) : "-", alloc(run),
                    baseline > 0 ? String.format(Locale.ROOT, "%.0f%%", 100 * ops / baseline) : "-"));
        }
        return String.join(System.lineSeparator(), rows);
    }

    private static String size(RunResult run) {
        String size = run.getParams().getParam("dataBytes");
        if (size != null) {
            return size;
        }
        return run.getParams().getBenchmark().contains("StreamDecode") ? "1024, 64 MiB stream" : "1024";
    }

    private static String method(RunResult run) {
        String name = run.getParams().getBenchmark();
        String cls = name.substring(0, name.lastIndexOf('.'));
        return cls.substring(cls.lastIndexOf('.') + 1).replace("Benchmark", "") + "." + name.substring(
                name.lastIndexOf('.') + 1);
    }

    /** The bytes one operation moves, for MB/s: the encoded message, or the whole stream. */
    private static double bytesPerOp(RunResult run) {
        String name = run.getParams().getBenchmark();
        if (name.contains("StreamDecode")) {
            return StreamDecodeBenchmark.STREAM_BYTES;
        }
        String size = run.getParams().getParam("dataBytes");
        int names = CodecBenchmark.FROM.length() + CodecBenchmark.TO.length();
        return size == null ? 0 : Integer.parseInt(size) + names + 20;
    }

    private static double baselineOps(Collection<RunResult> results, RunResult run) {
        String name = run.getParams().getBenchmark();
        String cls = name.substring(0, name.lastIndexOf('.'));
        String size = run.getParams().getParam("dataBytes");
        for (RunResult other : results) {
            String otherName = other.getParams().getBenchmark();
            if (otherName.equals(cls + ".baselineArraycopy") && Objects.equals(size,
                    other.getParams().getParam("dataBytes"))) {
                return other.getPrimaryResult().getScore();
            }
        }
        return 0;
    }

    private static String alloc(RunResult run) {
        Result<?> norm = run.getSecondaryResults().get("gc.alloc.rate.norm");
        return norm == null ? "-" : String.format(Locale.ROOT, "%,.0f", norm.getScore());
    }
}
