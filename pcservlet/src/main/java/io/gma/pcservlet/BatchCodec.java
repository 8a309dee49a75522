package io.gma.pcservlet;

import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import okhttp3.MediaType;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import okio.BufferedSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batches as the HTTP tunnel carries them (protocol.md section 6): messages back to back, in POST bodies,
 * in the answers to polls, and as the ERRORs in a 200 answer to a POST. Messages keep the bytes they were
 * decoded from, so a batch is written from them as they came, with no encoding pass.
 */
final class BatchCodec {
    private static final Logger LOG = LoggerFactory.getLogger(BatchCodec.class);
    static final WireCodec CODEC = WireCodec.standard();
    static final MediaType GMA = MediaType.get(Tunnel.MEDIA_TYPE);
    /** The largest message the codec takes, encoded: header, two names, data. */
    static final long MAX_ENCODED_MESSAGE = 20 + 255 + 255 + WireCodec.DEFAULT_MAX_MESSAGE_BYTES;
    private static final int CHUNK = 64 * 1024;

    private final String domain;
    private final int maxBatchBytes;

    /** @param domain this PC servlet's, for its log lines */
    BatchCodec(String domain, int maxBatchBytes) {
        this.domain = domain;
        this.maxBatchBytes = maxBatchBytes;
    }

    /** Messages back to back, as one array: a poll's answer, or the ERRORs answering a POST. */
    static byte[] encodeAll(List<Message> messages) {
        byte[] out = new byte[messages.stream().mapToInt(Message::encodedLength).sum()];
        int at = 0;
        for (Message m : messages) {
            byte[] packed = Packed.shared(m);
            System.arraycopy(packed, 0, out, at, packed.length);
            at += packed.length;
        }
        return out;
    }

    /** Queued messages back to back, as one array: a batch to compress. */
    static byte[] encodeQueued(List<Queued> messages, long length) {
        byte[] out = new byte[Math.toIntExact(length)];
        int at = 0;
        for (Queued q : messages) {
            byte[] packed = Packed.shared(q.message());
            System.arraycopy(packed, 0, out, at, packed.length);
            at += packed.length;
        }
        return out;
    }

    /** The first {@code bytes} bytes of queued messages back to back (all of them when they are fewer). */
    static byte[] encodePrefix(List<Queued> messages, int bytes) {
        byte[] out = new byte[bytes];
        int at = 0;
        for (Queued q : messages) {
            byte[] packed = Packed.shared(q.message());
            int n = Math.min(packed.length, bytes - at);
            System.arraycopy(packed, 0, out, at, n);
            at += n;
            if (at == bytes) {
                return out;
            }
        }
        return java.util.Arrays.copyOf(out, at);
    }

    /** A POST's body: the messages written to the connection one after another, with no array of them all. */
    static RequestBody requestBody(List<Queued> messages) {
        long length = messages.stream().mapToLong(Queued::encodedLength).sum();
        return new RequestBody() {
            @Override
            public MediaType contentType() {
                return GMA;
            }

            @Override
            public long contentLength() {
                return length;
            }

            @Override
            public void writeTo(BufferedSink sink) throws IOException {
                for (Queued q : messages) {
                    sink.write(Packed.shared(q.message()));
                }
            }
        };
    }

    /** The largest body: maxBatchBytes, plus the one message that may start before that limit and end after. */
    long bodyLimit() {
        return maxBatchBytes + MAX_ENCODED_MESSAGE;
    }

    int maxBatchBytes() {
        return maxBatchBytes;
    }

    /**
     * Decodes a body into {@code batch}; false when a message starts past maxBatchBytes or the body passes
     * {@link #bodyLimit()} (reading stops there).
     *
     * @throws ProtocolException at the first byte that is not GMA, or a message cut short at the end
     */
    boolean read(InputStream body, List<Message> batch) throws IOException {
        StreamDecoder decoder = CODEC.newStreamDecoder();
        byte[] chunk = new byte[CHUNK];
        long[] started = {0}; // where the next message starts
        boolean[] over = {false};
        long total = 0;
        for (int n; (n = body.read(chunk)) > 0 && !over[0];) {
            total += n;
            if (total > bodyLimit()) {
                return false;
            }
            decoder.feed(chunk, 0, n, m -> {
                over[0] |= started[0] >= maxBatchBytes;
                started[0] += m.encodedLength();
                batch.add(m);
            });
        }
        if (over[0]) {
            return false;
        }
        decoder.finish();
        return true;
    }

    /**
     * The ERRORs in a 200 answer to a batch of {@code batchSize} messages: at most one each, so the body is
     * read up to that many of the largest ERROR; what decodes before a bad byte or that bound is kept.
     */
    List<Message> decodeErrors(ResponseBody body, int batchSize) {
        List<Message> errors = new ArrayList<>();
        if (body == null) {
            return errors;
        }
        long limit = (long) batchSize * (20 + 255 + 255 + 32 + Router.MAX_SENTENCE * 4);
        StreamDecoder decoder = CODEC.newStreamDecoder();
        byte[] chunk = new byte[CHUNK];
        long total = 0;
        try (InputStream in = body.byteStream()) {
            for (int n; (n = in.read(chunk)) > 0;) {
                total += n;
                if (total > limit) {
                    LOG.warn("{}: an answer to {} messages passed {} bytes; the ERRORs after that were dropped",
                            domain, batchSize, limit);
                    break;
                }
                decoder.feed(chunk, 0, n, errors::add);
            }
        } catch (IOException e) {
            LOG.warn("{}: an answer's ERRORs could not all be read: {}", domain, e.getMessage());
        }
        return errors;
    }

    /**
     * A batch a poll answered, whole, plain or zstd as {@code contentEncoding} says (counted in {@code metrics});
     * empty when it cannot be read whole (it is polled again). A zstd body is decompressed up to
     * {@link #bodyLimit()}, no further.
     */
    Optional<List<Message>> decodeBatch(ResponseBody body, String contentEncoding, Metrics metrics) {
        List<Message> batch = new ArrayList<>();
        boolean zstd = Compression.isZstd(contentEncoding);
        if (!zstd && !Compression.isPlain(contentEncoding)) {
            LOG.warn("{}: a polled batch came as Content-Encoding \"{}\", which was not asked for", domain,
                    contentEncoding);
            return Optional.empty();
        }
        try (InputStream in = body.byteStream()) {
            long wire = -1;
            boolean whole;
            if (zstd) {
                byte[] compressed = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, bodyLimit() + 1));
                wire = compressed.length;
                try (InputStream plain = Compression.decompressing(compressed)) {
                    whole = compressed.length <= bodyLimit() && read(plain, batch);
                }
            } else {
                whole = read(in, batch);
            }
            if (whole) {
                long plain = batch.stream().mapToLong(Message::encodedLength).sum();
                metrics.received(wire < 0 ? plain : wire, plain, zstd);
                return Optional.of(batch);
            }
            LOG.warn("{}: a polled batch passed maxBatchBytes {} plus one message", domain, maxBatchBytes);
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: a polled batch could not be read: {}", domain, e.getMessage());
        }
        return Optional.empty();
    }
}
