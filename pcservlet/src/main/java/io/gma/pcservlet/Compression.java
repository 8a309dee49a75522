package io.gma.pcservlet;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Locale;

/**
 * Batches compressed on the HTTP tunnel (protocol.md section 6.2, an extension): zstd, negotiated. A receiver that
 * reads zstd says so with {@code Accept-Encoding: zstd} on its answers (a POST's) or a poller on its request (a
 * poll's); only then does the other side send {@code Content-Encoding: zstd}, and only when it pays: a batch that
 * does not shrink to {@value #PAYS_PERCENT}% or less goes plain (a large one is judged by its first
 * {@value #SAMPLE_BYTES} bytes first). docs/pcservlet.md, "Compression", says why zstd and why level
 * {@value #LEVEL}.
 */
final class Compression {
    /** Whether this PC servlet compresses and says it reads compressed batches. */
    enum Mode {
        /** Compress where the peer reads zstd and it pays; say that zstd is read. The default. */
        AUTO,
        /** Send plain, and do not say that zstd is read (a compressed batch is still read). */
        OFF;

        /** {@code auto} or {@code off}, in any case. */
        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.name().equalsIgnoreCase(s.trim())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("compression \"" + s + "\" is not auto or off");
        }
    }

    static final String ZSTD = "zstd";
    static final String IDENTITY = "identity";
    static final String CONTENT_ENCODING = "Content-Encoding";
    static final String ACCEPT_ENCODING = "Accept-Encoding";
    /** zstd's fastest standard level: about as small as 3 on monitoring rows, for half the CPU (bench compress). */
    static final int LEVEL = 1;
    /** A batch goes compressed only when that makes it this share of its size, or less. */
    static final int PAYS_PERCENT = 90;
    /** Smaller batches go plain: a frame's header and a native call cost more than the bytes they save. */
    static final int MIN_BYTES = 256;
    /** After this many batches in a row that did not pay, the next ones are not tried for a while. */
    static final int MISSES = 2;
    /** The most batches sent plain, untried, after misses: the pause doubles with each miss up to this. */
    static final int MAX_SKIP = 64;
    /**
     * A batch over twice this is judged by its first this many bytes first: when they do not pay, the batch goes
     * plain, neither copied into one array nor compressed whole.
     */
    static final int SAMPLE_BYTES = 64 * 1024;

    private Compression() {
    }

    /**
     * Whether an Accept-Encoding header names zstd with a weight above 0 (RFC 9110 12.5.3): {@code zstd},
     * {@code gzip, zstd;q=0.5}; not {@code zstd;q=0}, not {@code *} (a peer that reads zstd names it).
     */
    static boolean accepts(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        for (String part : acceptEncoding.split(",")) {
            String[] params = part.split(";");
            if (!params[0].trim().equalsIgnoreCase(ZSTD)) {
                continue;
            }
            for (int i = 1; i < params.length; i++) {
                String p = params[i].trim().toLowerCase(Locale.ROOT);
                if (p.startsWith("q=")) {
                    try {
                        return Double.parseDouble(p.substring(2)) > 0;
                    } catch (NumberFormatException e) {
                        return false;
                    }
                }
            }
            return true;
        }
        return false;
    }

    /** Whether a Content-Encoding header says the body is plain: absent, empty or identity. */
    static boolean isPlain(String contentEncoding) {
        return contentEncoding == null || contentEncoding.isBlank()
                || contentEncoding.trim().equalsIgnoreCase(IDENTITY);
    }

    /** Whether a Content-Encoding header says zstd (and only that). */
    static boolean isZstd(String contentEncoding) {
        return contentEncoding != null && contentEncoding.trim().equalsIgnoreCase(ZSTD);
    }

    /** The content size a zstd frame declares: -1 when it does not say. */
    static long declaredSize(byte[] frame) {
        long size = frame.length < 4 ? -2 : Zstd.getFrameContentSize(frame);
        return size < 0 ? -1 : size;
    }

    /**
     * The plain bytes of a zstd body, as a stream; the reader bounds how much it takes. Every IOException it
     * throws is the body's fault (it is read from memory).
     */
    static InputStream decompressing(byte[] compressed) throws IOException {
        return new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(compressed));
    }

    /** A whole body compressed in one frame, for the tests and poll answers; no judge, no bound. */
    static byte[] zstd(byte[] plain) {
        return Zstd.compress(plain, LEVEL);
    }

    /**
     * One sender's compressor and its judgement of what pays: a forwarder's (one thread), or a relayed domain's
     * poll answers (one poll at a time). A batch is compressed into room for {@value #PAYS_PERCENT}% of it: zstd
     * gives up when it does not fit, and the batch goes plain. After {@value #MISSES} misses in a row, the next
     * batches go plain untried, 1, 2, 4 ... up to {@value #MAX_SKIP} of them, until one tried pays again: random
     * bytes cost one compression in {@value #MAX_SKIP} batches.
     */
    static final class Compressor implements AutoCloseable {
        private final ZstdCompressCtx ctx = new ZstdCompressCtx().setLevel(LEVEL).setContentSize(true);
        private byte[] out = new byte[0];
        private int missesInARow;
        private int skip;
        private int skipping;
        private boolean closed;

        /**
         * Whether a batch of {@code length} bytes is to be tried: false when it is too small, or while batches go
         * untried after misses (each call counts one of them).
         */
        synchronized boolean tries(long length) {
            if (length < MIN_BYTES || closed) {
                return false;
            }
            if (skipping > 0) {
                skipping--;
                return false;
            }
            return true;
        }

        /**
         * Whether the first bytes of a large batch, {@code sample[0, length)}, pay; a miss when not, counted as
         * {@link #compress} counts one.
         */
        synchronized boolean samplePays(byte[] sample, int length) {
            return !closed && squeeze(sample, length) >= 0;
        }

        /**
         * {@code plain[0, length)} compressed, a new array of its own; null when it did not pay (the batch goes
         * plain).
         */
        synchronized byte[] compress(byte[] plain, int length) {
            if (closed) {
                return null;
            }
            int n = squeeze(plain, length);
            // a copy: the body may still be written while the next batch is compressed
            return n < 0 ? null : Arrays.copyOf(out, n);
        }

        /** Compresses into {@link #out}, within PAYS_PERCENT of the input: the length, or -1 (a miss). */
        private int squeeze(byte[] plain, int length) {
            int room = (int) ((long) length * PAYS_PERCENT / 100);
            if (out.length < room) {
                out = new byte[room];
            }
            int n;
            try {
                n = ctx.compressByteArray(out, 0, room, plain, 0, length);
            } catch (ZstdException tooBig) {
                n = -1; // dstSize_tooSmall: it does not fit in PAYS_PERCENT of the input
            }
            if (n < 0) {
                if (++missesInARow >= MISSES) {
                    skip = skip == 0 ? 1 : Math.min(MAX_SKIP, skip * 2);
                    skipping = skip;
                }
                return -1;
            }
            missesInARow = 0;
            skip = 0;
            return n;
        }

        @Override
        public synchronized void close() {
            closed = true;
            ctx.close();
        }
    }
}
