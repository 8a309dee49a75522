package io.gma.bench.compress;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;

/**
 * The candidates for the PC servlets' batches, each compressing and decompressing one batch in memory, as the PC
 * servlet would (one array in, one out): zstd (zstd-jni) at levels 1 and 3, lz4 (lz4-java, its fastest
 * compressor), and the JDK's Deflater at levels 1 and 6.
 */
public final class Codecs {
    /** One candidate: compresses {@code in} into {@code out}, returning the length; decompresses back. */
    public interface Codec extends AutoCloseable {
        String name();

        int compress(byte[] in, byte[] out);

        void decompress(byte[] in, int length, byte[] out, int plainLength);

        @Override
        default void close() {
        }
    }

    /** What a candidate did with one batch: its ratio, and MB/s each way on one thread. */
    public record Result(String codec, double ratio, double compressMbPerS, double decompressMbPerS) {
    }

    private Codecs() {
    }

    /** The candidates, fresh (each holds its context). */
    public static List<Codec> all() {
        return List.of(zstd(1), zstd(3), lz4(), deflate(1), deflate(6));
    }

    static Codec zstd(int level) {
        ZstdCompressCtx c = new ZstdCompressCtx().setLevel(level).setContentSize(true);
        ZstdDecompressCtx d = new ZstdDecompressCtx();
        return new Codec() {
            @Override
            public String name() {
                return "zstd " + level;
            }

            @Override
            public int compress(byte[] in, byte[] out) {
                return c.compressByteArray(out, 0, out.length, in, 0, in.length);
            }

            @Override
            public void decompress(byte[] in, int length, byte[] out, int plainLength) {
                d.decompressByteArray(out, 0, plainLength, in, 0, length);
            }

            @Override
            public void close() {
                c.close();
                d.close();
            }
        };
    }

    static Codec lz4() {
        LZ4Compressor c = LZ4Factory.fastestInstance().fastCompressor();
        LZ4FastDecompressor d = LZ4Factory.fastestInstance().fastDecompressor();
        return new Codec() {
            @Override
            public String name() {
                return "lz4";
            }

            @Override
            public int compress(byte[] in, byte[] out) {
                return c.compress(in, 0, in.length, out, 0, out.length);
            }

            @Override
            public void decompress(byte[] in, int length, byte[] out, int plainLength) {
                d.decompress(in, 0, out, 0, plainLength);
            }
        };
    }

    static Codec deflate(int level) {
        Deflater c = new Deflater(level);
        Inflater d = new Inflater();
        return new Codec() {
            @Override
            public String name() {
                return "Deflater " + level;
            }

            @Override
            public int compress(byte[] in, byte[] out) {
                c.reset();
                c.setInput(in);
                c.finish();
                int n = c.deflate(out);
                if (!c.finished()) {
                    throw new IllegalStateException("deflate did not fit");
                }
                return n;
            }

            @Override
            public void decompress(byte[] in, int length, byte[] out, int plainLength) {
                d.reset();
                d.setInput(in, 0, length);
                try {
                    d.inflate(out, 0, plainLength);
                } catch (DataFormatException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void close() {
                c.end();
                d.end();
            }
        };
    }

    /** Compresses and decompresses {@code batch} with {@code codec} for about {@code millis} each way. */
    public static Result measure(Codec codec, byte[] batch, long millis) {
        byte[] out = new byte[(int) Math.max(Zstd.compressBound(batch.length), batch.length + batch.length / 4
                + 1024)];
        byte[] back = new byte[batch.length];
        int n = codec.compress(batch, out);
        codec.decompress(out, n, back, batch.length);
        if (!java.util.Arrays.equals(batch, back)) {
            throw new IllegalStateException(codec.name() + " did not give the batch back");
        }
        long deadline = System.nanoTime() + millis * 1_000_000 / 4; // warm-up
        while (System.nanoTime() < deadline) {
            codec.compress(batch, out);
        }
        long start = System.nanoTime();
        long rounds = 0;
        do {
            codec.compress(batch, out);
            rounds++;
        } while (System.nanoTime() - start < millis * 1_000_000);
        double compressSeconds = (System.nanoTime() - start) / 1e9 / rounds;
        start = System.nanoTime();
        rounds = 0;
        do {
            codec.decompress(out, n, back, batch.length);
            rounds++;
        } while (System.nanoTime() - start < millis * 1_000_000);
        double decompressSeconds = (System.nanoTime() - start) / 1e9 / rounds;
        double mb = batch.length / 1e6;
        return new Result(codec.name(), (double) batch.length / n, mb / compressSeconds, mb / decompressSeconds);
    }
}
