package io.gma.pcservlet;

import io.gma.internal.link.Backoff;
import io.gma.wire.Message;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an outbound-only domain receives: a long poll to its via domain's PC servlet, again and again
 * (protocol.md section 6). A batch is acknowledged, in the next poll, only once it is queued here whole; until
 * then the relay keeps it and answers it again.
 */
final class Poller implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);
    static final int WAIT_SECONDS = 30;
    /** How long a polled batch with no room here waits for room before it is polled again. */
    static final long ROOM_WAIT_MILLIS = 1000;

    private final String domain;
    private final String via;
    private final Compression.Mode compression;
    private final Routes routes;
    private final TunnelClient tunnel;
    private final BatchCodec codec;
    private final Inbound inbound;
    private final RoomSignal room;
    private final Metrics metrics;
    private final BooleanSupplier stopping;
    /** This side's maxBatchBytes: the most a polled batch may hold (but for its last message). */
    private final int maxBatchBytes;
    private String ack = "";
    /** Failed polls in a row, and the delay before the next: as the forwarder's. */
    private final Backoff failures = new Backoff(Forwarder.MIN_BACKOFF, Forwarder.MAX_BACKOFF);
    /** The last URL refused for want of TLS, logged once (null: none). */
    private String refusedUrl;

    /**
     * @param inbound where a polled batch is queued, whole or not at all
     * @param room waited on while a polled batch finds no room
     * @param stopping whether the PC servlet is stopping: polling ends
     */
    Poller(Settings settings, Routes routes, TunnelClient tunnel, BatchCodec codec, Inbound inbound, RoomSignal room,
            Metrics metrics, BooleanSupplier stopping) {
        this.domain = settings.domain();
        this.via = settings.via();
        this.compression = settings.compression();
        this.maxBatchBytes = settings.maxBatchBytes();
        this.routes = routes;
        this.tunnel = tunnel;
        this.codec = codec;
        this.inbound = inbound;
        this.room = room;
        this.metrics = metrics;
        this.stopping = stopping;
    }

    @Override
    public void run() {
        while (!stopping.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
            try {
                long pause = pollOnce();
                if (pause > 0) {
                    Thread.sleep(pause); // a back-off or a Retry-After: a delay asked for, not a wait for news
                }
            } catch (InterruptedException stopped) {
                return;
            }
        }
    }

    /** One poll; the pause before the next (0: at once). */
    private long pollOnce() throws InterruptedException {
        String base;
        try {
            base = routes.target(via).url(); // an outbound-only domain's target is its via's PC servlet
        } catch (Routes.RouteException e) {
            return backoff("looking up the via domain " + via + ": " + e.getMessage());
        }
        Response answer;
        try {
            // with this side's maxBatchBytes: a via that batches more would hand out a batch read here never whole
            answer = tunnel.poll(via, base, WAIT_SECONDS, ack, compression == Compression.Mode.AUTO,
                    maxBatchBytes);
        } catch (IllegalArgumentException refused) { // a plaintext URL under security, or one OkHttp cannot parse
            if (!base.equals(refusedUrl)) {
                refusedUrl = base;
                LOG.error("{}: not polling: {}", domain, refused.getMessage());
            }
            return backoff(refused.getMessage());
        } catch (IOException e) {
            return unanswered(e);
        }
        try (answer) {
            return answered(answer);
        }
    }

    /** Acts on a poll's answer; the pause before the next poll. */
    private long answered(Response answer) throws InterruptedException {
        if (answer.code() == 204) {
            failures.reset();
            return 0;
        }
        if (answer.code() == 429 || answer.code() == 503) {
            return Forwarder.retryAfterMillis(answer.header("Retry-After"));
        }
        if (answer.code() != 200) {
            return backoff("via " + via + " answered " + answer.code() + " to a poll");
        }
        String id = answer.header(Tunnel.BATCH_HEADER);
        if (id == null) {
            return backoff("via " + via + " answered a poll without " + Tunnel.BATCH_HEADER);
        }
        Optional<List<Message>> batch = codec.decodeBatch(answer.body(), answer.header(Compression.CONTENT_ENCODING),
                metrics);
        if (batch.isEmpty()) {
            return backoff("via " + via + " answered a batch that cannot be read whole");
        }
        failures.reset();
        // no room here yet: wait for some, then poll again without the ack, and get the same batch
        if (room.await(() -> inbound.admitPolled(batch.get()), Boolean::booleanValue,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROOM_WAIT_MILLIS))) {
            ack = id;
        }
        return 0;
    }

    private long unanswered(IOException e) {
        routes.forget(via);
        return backoff("polling via " + via + ": " + e.getMessage());
    }

    private long backoff(String why) {
        metrics.retries.increment();
        long delay = failures.failed();
        LOG.debug("{}: {}; polling again in {} ms", domain, why, delay);
        return delay;
    }
}
