package io.gma.pcservlet;

import io.gma.internal.link.Backoff;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts one destination domain's queue, several batches in flight at once, and acts on each answer, oldest
 * first, as protocol.md section 6 says:
 *
 * <pre>
 *   200                 accepted: the batch is done; ERRORs in the body go back to their senders
 *   400 401 403 413 415 refused for good: each message's sender gets ERROR with that code
 *   429 503             pushed back: the batch is kept, and posted again after Retry-After
 *   409                 out of turn: kept, and posted again at once after a short back-off
 *   other, or no answer unknown: the batch is kept, and posted again after a capped, jittered back-off
 * </pre>
 *
 * <p>Several in flight (docs/pcservlet.md, "Several batches in flight"): each POST is numbered
 * {@code stream/epoch/batch} ({@link Tunnel#STREAM_HEADER}), and the destination takes them in that order
 * ({@link StreamOrder}). It says how many it lets be in flight ({@link Tunnel#WINDOW_HEADER}); until it has, and
 * for a destination that never says (one that speaks protocol.md section 6 alone), one batch is in flight at a
 * time. A kept batch sends every batch after it back to the queue with it (go back N): their calls are
 * cancelled, and they are posted again, in order, in a new epoch, which the destination takes as superseding
 * the old one. A batch is made as soon as the window has room: while the window is full, messages gather for
 * the next one, so batches grow with the load as before.
 *
 * <p>A batch for a domain that polls this one (outbound-only, via this domain) is handed to its relay queue
 * instead, once that has room. A retried batch may arrive twice (OkHttp also retries on its own); receivers drop
 * what they delivered already by (from, sequence).
 */
final class Forwarder implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Forwarder.class);
    /** After a failed post, the first retry waits 100 to 200 ms; the back-off grows to 2.5 to 5 s. */
    static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    static final long MAX_RETRY_AFTER_SECONDS = 60;
    /** How long a batch for a full relay queue waits for room before the forwarder looks at its queue again. */
    static final long RELAY_WAIT_MILLIS = 1000;
    /** The longest refusal text read from an answer. */
    private static final int MAX_TEXT = 4096;

    private final DomainQueue queue;
    private final Outbound owner;
    private final Settings settings;
    private final Routes routes;
    private final Relay relay;
    private final TunnelClient tunnel;
    private final BatchCodec codec;
    private final Router router;
    private final RoomSignal room;
    private final Metrics metrics;
    private final Spooling spooling;
    private final String domain;
    /** Failed posts in a row, and the delay before the next. */
    private final Backoff failures = new Backoff(MIN_BACKOFF, MAX_BACKOFF);
    /** The last look-up found no such domain. */
    private boolean unknownDomain;
    /** The last URL refused for want of TLS, logged once (null: none). */
    private String refusedUrl;
    /** The batches posted and not settled yet, oldest first. */
    private final ArrayDeque<Flight> flights = new ArrayDeque<>();
    /** This forwarder's numbering: its stream, the epoch (one more at each go back) and the last batch's number. */
    private final long stream = ThreadLocalRandom.current().nextLong();
    private long epoch = 1;
    private long numbered;
    /** How many batches the destination lets be in flight, as it last said; 1 until it says. */
    private int window = 1;
    /** Whether the destination reads zstd, as its last answer said (Accept-Encoding); false until it says. */
    private boolean peerReadsZstd;
    /** This forwarder's compressor, made when a destination first says it reads zstd; closed when it ends. */
    private Compression.Compressor compressor;
    /** The flight being sent on this thread ({@link Flight#sendInline}), which {@link #stop} cancels; else null. */
    private volatile Flight inline;
    /** Set by {@link #stop}: a call made after it is cancelled at once. */
    private volatile boolean stopping;

    /**
     * @param queue what it posts
     * @param owner told when the queue is retired, and whether the queues are closed
     * @param router where ERRORs for the senders go
     * @param room told when a batch is done with; waited on while a relay queue is full
     */
    Forwarder(DomainQueue queue, Outbound owner, Settings settings, Routes routes, Relay relay, TunnelClient tunnel,
            BatchCodec codec, Router router, RoomSignal room, Metrics metrics, Spooling spooling) {
        this.spooling = spooling;
        this.queue = queue;
        this.owner = owner;
        this.settings = settings;
        this.routes = routes;
        this.relay = relay;
        this.tunnel = tunnel;
        this.codec = codec;
        this.router = router;
        this.room = room;
        this.metrics = metrics;
        this.domain = settings.domain();
    }

    /** One POST in flight: its batch, its call, and, once it came, its answer or its failure. */
    private final class Flight implements Callback {
        final List<Queued> batch;
        final Routes.Target target;
        /** The body went as zstd. */
        final boolean compressed;
        final long start = System.nanoTime();
        private Call call;
        private Response response;
        private IOException failure;
        private boolean settled;
        /** Given up (go back N, or the forwarder stopped): an answer that still comes is closed unread. */
        private boolean abandoned;

        Flight(List<Queued> batch, Routes.Target target, boolean compressed) {
            this.batch = batch;
            this.target = target;
            this.compressed = compressed;
        }

        /** Sends the call on OkHttp's dispatcher: the forwarder goes on meanwhile. */
        void send(Call c) {
            this.call = c;
            c.enqueue(this);
        }

        /**
         * Sends the call on the forwarder's own thread and returns once it is answered or failed: with one batch
         * in flight the forwarder would only wait for it, and the dispatcher's thread hop is not paid.
         * {@link #stop} cancels it.
         */
        void sendInline(Call c) {
            this.call = c;
            inline = this;
            if (stopping) {
                c.cancel(); // stop() ran before it could see this call: it fails at once
            }
            try {
                onResponse(c, c.execute());
            } catch (IOException e) {
                onFailure(c, e);
            } catch (RuntimeException bug) {
                // as OkHttp's dispatcher does with a call that throws: a failure, retried, not the forwarder's end
                LOG.warn("{}: a POST to {} failed unexpectedly", domain, queue.domain, bug);
                onFailure(c, new IOException("the POST failed: " + bug, bug));
            } finally {
                inline = null;
            }
        }

        @Override
        public void onResponse(Call c, Response r) {
            boolean keep;
            synchronized (this) {
                keep = !abandoned;
                if (keep) {
                    response = r;
                    settled = true;
                    notifyAll();
                }
            }
            if (keep) {
                queue.wake(); // not under this flight's monitor: nextBatch asks it under the queue's lock
            } else {
                r.close();
            }
        }

        @Override
        public void onFailure(Call c, IOException e) {
            synchronized (this) {
                failure = e;
                settled = true;
                notifyAll();
            }
            queue.wake();
        }

        synchronized boolean settled() {
            return settled;
        }

        synchronized void awaitSettled() throws InterruptedException {
            while (!settled) {
                wait();
            }
        }

        /** Cancels the call; its answer, if one came or comes, is closed. */
        void abandon() {
            Response r;
            synchronized (this) {
                abandoned = true;
                r = response;
                response = null;
            }
            if (call != null) {
                call.cancel();
            }
            if (r != null) {
                r.close();
            }
        }
    }

    @Override
    public void run() {
        long linger = settings.linger().toNanos();
        try {
            while (true) {
                while (!flights.isEmpty() && flights.peekFirst().settled()) {
                    pause(settle(flights.pollFirst()));
                }
                if (flights.size() >= inFlightLimit()) {
                    flights.peekFirst().awaitSettled();
                    continue;
                }
                // while batches are in flight, a new one goes as soon as there is something, and the wait for it
                // ends when the oldest is answered; with none in flight, it lingers as told
                List<Queued> batch = queue.nextBatch(settings.maxBatchBytes(), flights.isEmpty() ? linger : 0,
                        TimeUnit.SECONDS.toNanos(1), () -> !flights.isEmpty() && flights.peekFirst().settled());
                if (batch.isEmpty()) {
                    if (!flights.isEmpty()) {
                        continue;
                    }
                    if (owner.isClosed()) {
                        return;
                    }
                    // a domain the registry does not know goes at once: names from endpoints make no threads
                    if (queue.retireIfIdle(unknownDomain ? 0 : settings.idleQueue().toNanos())) {
                        owner.retired(queue);
                        return;
                    }
                    continue;
                }
                pause(post(batch));
            }
        } catch (InterruptedException stopped) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("{}: the forwarder to {} failed", domain, queue.domain, e);
        } finally {
            flights.forEach(Flight::abandon);
            if (compressor != null) {
                compressor.close();
            }
        }
    }

    /**
     * From another thread, when the queues close: cancels the POST this forwarder's thread is making, if any (an
     * interrupt alone does not end a blocking socket read); the interrupt that follows ends the thread.
     */
    void stop() {
        stopping = true; // before inline is read: either this sees the call, or sendInline sees this
        Flight f = inline;
        if (f != null) {
            f.call.cancel(); // only the call: an answer that came meanwhile is the forwarder's to close
        }
    }

    /** How many batches may be in flight now: the destination's window, within this PC servlet's setting. */
    private int inFlightLimit() {
        return Math.min(window, settings.maxBatchesInFlight());
    }

    /** A back-off or a Retry-After: a delay asked for, not a wait for news. */
    private static void pause(long millis) throws InterruptedException {
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    /**
     * Posts the batch (the newest in flight), or, when it cannot go by POST (no such domain, a relayed one, a URL
     * refused), settles it once the batches before it are; returns how long to wait before the next attempt
     * (0: go on at once).
     */
    private long post(List<Queued> batch) throws InterruptedException {
        Routes.Target target;
        try {
            target = routes.target(queue.domain);
        } catch (Routes.RouteException e) {
            if (!flights.isEmpty()) {
                return afterTheOthers();
            }
            if (e.code == ErrorCode.NO_ROUTE) {
                unknownDomain = true;
                finish(batch, e.code, e.getMessage());
                return 0;
            }
            unknownDomain = false;
            queue.goBack();
            return backoff("looking up domain " + queue.domain + ": " + e.getMessage());
        }
        unknownDomain = false;
        if (target.relayedHere()) {
            if (!flights.isEmpty()) {
                return afterTheOthers();
            }
            toRelay(batch);
            return 0;
        }
        Call call;
        Body body = body(batch);
        try {
            call = tunnel.postCall(target.domain(), target.url(), body.content, Long.toHexString(stream) + "/" + epoch
                    + "/" + (++numbered), body.encoding);
        } catch (IllegalArgumentException refused) {
            numbered--;
            if (!flights.isEmpty()) {
                return afterTheOthers();
            }
            // a setting to fix, not a failure to retry: each sender is told at once, and the log says it once.
            // Security refuses a plaintext URL (no credential crosses in the clear); a URL OkHttp cannot parse is
            // this PC servlet's fault to send, not the message's (INTERNAL: not NO_ROUTE, on which senders drop
            // their subscribers and table consumers for good, though the domain is there and may fix its URL)
            if (!target.url().equals(refusedUrl)) {
                refusedUrl = target.url();
                LOG.error("{}: {}", domain, refused.getMessage());
            }
            metrics.unsendable.increment();
            finish(batch, refused instanceof TunnelClient.BadUrl ? ErrorCode.INTERNAL : ErrorCode.UNAUTHORIZED,
                    domain + " did not send to " + refused.getMessage());
            return 0;
        }
        Flight f = new Flight(batch, target, body.encoding != null);
        flights.addLast(f);
        metrics.sent(body.wireBytes, body.plainBytes, f.compressed);
        if (inFlightLimit() == 1) {
            f.sendInline(call); // one in flight: nothing to do until it is answered
        } else {
            f.send(call);
        }
        return 0;
    }

    /** A POST's body, its Content-Encoding (null: plain), and its size on the wire and plain. */
    private record Body(okhttp3.RequestBody content, String encoding, long wireBytes, long plainBytes) {
    }

    /**
     * The batch as it is posted: compressed when the destination reads zstd, compression is on, and it pays
     * (docs/pcservlet.md, "Compression"); else plain, written from the messages with no array of them all.
     */
    private Body body(List<Queued> batch) {
        long plain = batch.stream().mapToLong(Queued::encodedLength).sum();
        if (!peerReadsZstd || settings.compression() != Compression.Mode.AUTO) {
            return new Body(BatchCodec.requestBody(batch), null, plain, plain);
        }
        if (compressor == null) {
            compressor = new Compression.Compressor();
        }
        if (!compressor.tries(plain)) {
            metrics.uncompressedSent.increment();
            return new Body(BatchCodec.requestBody(batch), null, plain, plain);
        }
        long start = System.nanoTime();
        try {
            return compressed(batch, plain);
        } finally {
            metrics.compressNanos.add(System.nanoTime() - start);
        }
    }

    /** The batch compressed, or plain when that does not pay (judged by a sample first when it is large). */
    private Body compressed(List<Queued> batch, long plain) {
        if (plain > 2L * Compression.SAMPLE_BYTES) {
            byte[] sample = BatchCodec.encodePrefix(batch, Compression.SAMPLE_BYTES);
            if (!compressor.samplePays(sample, sample.length)) {
                metrics.uncompressedSent.increment();
                return new Body(BatchCodec.requestBody(batch), null, plain, plain);
            }
        }
        byte[] bytes = BatchCodec.encodeQueued(batch, plain);
        byte[] zstd = compressor.compress(bytes, bytes.length);
        if (zstd == null) {
            metrics.uncompressedSent.increment();
            return new Body(okhttp3.RequestBody.create(bytes, BatchCodec.GMA), null, plain, plain);
        }
        return new Body(okhttp3.RequestBody.create(zstd, BatchCodec.GMA), Compression.ZSTD, zstd.length, plain);
    }

    /** The newest batch waits until those in flight before it are settled, then is made again. */
    private long afterTheOthers() throws InterruptedException {
        queue.giveBackNewest();
        flights.peekFirst().awaitSettled();
        return 0;
    }

    /** Acts on the oldest flight's answer; how long to wait before the next attempt. */
    private long settle(Flight f) {
        IOException failed = f.failure;
        if (failed == null) {
            try (Response answer = f.response) {
                metrics.postTook(System.nanoTime() - f.start);
                return answered(f, answer);
            } catch (IOException e) {
                failed = e;
            }
        } else {
            metrics.postTook(System.nanoTime() - f.start);
        }
        goBack();
        routes.forget(queue.domain);
        return backoff("posting to domain " + queue.domain + " at " + f.target.url() + ": " + failed.getMessage());
    }

    /**
     * The oldest batch is kept: every batch in flight after it goes back to the queue with it, their calls
     * cancelled, and numbering starts a new epoch.
     */
    private void goBack() {
        if (!flights.isEmpty()) {
            metrics.wentBack.increment();
        }
        flights.forEach(Flight::abandon);
        flights.clear();
        queue.goBack();
        epoch++;
        numbered = 0;
    }

    /** The domain polls this one: the batch goes to its relay queue once that has room for it. */
    private void toRelay(List<Queued> batch) throws InterruptedException {
        DomainQueue q = relay.queue(queue.domain);
        if (Outbound.fits(q, batch) == null || room.await(() -> Outbound.fits(q, batch) == null,
                Boolean::booleanValue, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RELAY_WAIT_MILLIS))) {
            relay.addAll(queue.domain, batch);
            handedOver();
        } else {
            queue.giveBackNewest(); // still full: the batch waits at the front, and is offered again next round
        }
    }

    /** Acts on a POST's answer; how long to wait before the next attempt. */
    private long answered(Flight f, Response answer) throws IOException {
        List<Queued> batch = f.batch;
        int status = answer.code();
        String said = answer.header(Tunnel.WINDOW_HEADER);
        if (said != null) {
            window = window(said);
        }
        // every answer says whether the destination reads zstd now (it may have restarted with compression off)
        peerReadsZstd = Compression.accepts(answer.header(Compression.ACCEPT_ENCODING));
        if (status == 415 && f.compressed) {
            // it read zstd when it said so, and no longer does: the batch goes again, plain
            peerReadsZstd = false;
            goBack();
            return backoff("domain " + queue.domain + " refused a compressed batch: " + text(answer.body()));
        }
        if (status == 200) {
            metrics.batchesSent.increment();
            metrics.messagesSent.add(batch.size());
            // the messages the destination refused: their senders are told first, and their records go once the
            // ERRORs are safe (a crash in between sends them again, rather than losing both)
            long told = Spooling.NONE;
            for (Message e : codec.decodeErrors(answer.body(), batch.size())) {
                told = Math.max(told, router.routeOwn(e));
            }
            finish(batch, null, null, told);
            return 0;
        }
        String text = text(answer.body());
        if (status == 429 || status == 503) {
            metrics.throttledReceived.increment();
            failures.reset();
            long wait = retryAfterMillis(answer.header("Retry-After"));
            List<String> full = fullEndpoints(answer.header(Tunnel.FULL_HEADER), batch);
            goBack();
            if (status == 429 && !full.isEmpty()) {
                // only these endpoints are full: hold their messages back, post the others at once
                queue.holdBack(full, TimeUnit.MILLISECONDS.toNanos(wait));
                return 0;
            }
            return wait;
        }
        if (status == 409) {
            // out of turn (a batch before it was kept, or its turn did not come): posted again in a new epoch
            goBack();
            return backoff("domain " + queue.domain + " took a batch out of turn: " + text);
        }
        if (status == 400 || status == 401 || status == 403 || status == 413 || status == 415) {
            metrics.refused.increment();
            ErrorCode code = codeOf(text, status);
            LOG.warn("{}: domain {} refused a batch of {} messages with {}: {}", domain, queue.domain,
                    batch.size(), status, text);
            finish(batch, code, "domain " + queue.domain + " refused the batch (" + status + "): " + text);
            return 0;
        }
        goBack();
        routes.forget(queue.domain);
        return backoff("domain " + queue.domain + " answered " + status + ": " + text);
    }

    /** The window a destination said, within 1..{@link StreamOrder#MAX_WINDOW}; 1 when it said nonsense. */
    static int window(String said) {
        try {
            return (int) Math.max(1, Math.min(StreamOrder.MAX_WINDOW, Long.parseLong(said.trim())));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /** The batch is done: with {@code code} non-null, each message's sender gets that ERROR. */
    private void finish(List<Queued> batch, ErrorCode code, String reason) {
        finish(batch, code, reason, Spooling.NONE);
    }

    /** As {@link #finish(List, ErrorCode, String)}, its records kept until the ERROR of record {@code told} is safe. */
    private void finish(List<Queued> batch, ErrorCode code, String reason, long told) {
        failures.reset();
        if (code != null) {
            for (Queued q : batch) {
                told = Math.max(told, router.answer(q.message(), code, reason));
            }
        }
        List<Queued> done = queue.done();
        // the next hop has them, or their senders were told (once the ERRORs that tell them are safe)
        spooling.whenSafe(told, () -> spooling.ackAll(done));
        room.freed();
    }

    /** A batch handed to a relay queue: it goes on with its records, which the relayed domain's polls acknowledge. */
    private void handedOver() {
        failures.reset();
        queue.done();
        room.freed();
    }

    private long backoff(String why) {
        metrics.retries.increment();
        long delay = failures.failed();
        LOG.debug("{}: {}; retrying in {} ms", domain, why, delay);
        return delay;
    }

    /** Retry-After in seconds (RFC 9110 also allows a date, read here as the 1 s default), at most 60 s. */
    static long retryAfterMillis(String header) {
        long seconds = 1;
        if (header != null) {
            try {
                seconds = Math.max(0, Math.min(MAX_RETRY_AFTER_SECONDS, Long.parseLong(header.trim())));
            } catch (NumberFormatException notSeconds) {
                seconds = 1;
            }
        }
        return Math.max(10, TimeUnit.SECONDS.toMillis(seconds));
    }

    /** The names in an X-Gma-Full header that are destinations in the batch (others are ignored). */
    static List<String> fullEndpoints(String header, List<Queued> batch) {
        if (header == null || header.isBlank()) {
            return List.of();
        }
        java.util.Set<String> destinations = new java.util.HashSet<>();
        for (Queued q : batch) {
            destinations.add(q.to());
        }
        List<String> full = new java.util.ArrayList<>();
        for (String name : header.trim().split("\\s+")) {
            if (destinations.contains(name)) {
                full.add(name);
            }
        }
        return full;
    }

    /**
     * The error code a refusal names first ("FORBIDDEN domain ... may not ..."), else the status's. The text is
     * trimmed already ({@link #text}), so a code alone with a line end reads as that code.
     */
    static ErrorCode codeOf(String text, int status) {
        return ErrorText.parse(text, switch (status) {
            case 401 -> ErrorCode.UNAUTHORIZED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 413 -> ErrorCode.TOO_LARGE;
            default -> ErrorCode.MALFORMED;
        }).code();
    }

    private static String text(ResponseBody body) throws IOException {
        if (body == null) {
            return "";
        }
        try (InputStream in = body.byteStream()) {
            return new String(in.readNBytes(MAX_TEXT), StandardCharsets.UTF_8).trim();
        }
    }
}
