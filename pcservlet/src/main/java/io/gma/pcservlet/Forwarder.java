package io.gma.pcservlet;

import io.gma.internal.link.Backoff;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts one destination domain's queue, a batch at a time, and acts on each answer as PROTOCOL.md section 6
 * says:
 *
 * <pre>
 *   200                 accepted: the batch is done; ERRORs in the body go back to their senders
 *   400 401 403 413     refused for good: each message's sender gets ERROR with that code
 *   429 503             pushed back: the batch is kept, and posted again after Retry-After
 *   other, or no answer unknown: the batch is kept, and posted again after a capped, jittered back-off
 * </pre>
 *
 * A retried batch may arrive twice (OkHttp also retries on its own); receivers drop what they delivered
 * already by (from, sequence).
 */
final class Forwarder implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Forwarder.class);
    static final MediaType GMA = MediaType.get("application/x-gma");
    /** After a failed post, the first retry waits 100 to 200 ms; the back-off grows to 2.5 to 5 s. */
    static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    static final long MAX_RETRY_AFTER_SECONDS = 60;
    /** How soon a batch for a full relay queue is offered again (polls free room; no wake-up is sent). */
    static final long RELAY_RETRY_MILLIS = 50;
    /** The longest refusal text read from an answer. */
    private static final int MAX_TEXT = 4096;

    private final PcCore core;
    private final DomainQueue queue;
    private final OkHttpClient http;
    /** Failed posts in a row, and the delay before the next. */
    private final Backoff failures = new Backoff(MIN_BACKOFF, MAX_BACKOFF);
    /** The last look-up found no such domain. */
    private boolean unknownDomain;
    /** The last URL refused for want of TLS, logged once (null: none). */
    private String refusedUrl;

    Forwarder(PcCore core, DomainQueue queue, OkHttpClient http) {
        this.core = core;
        this.queue = queue;
        this.http = http;
    }

    @Override
    public void run() {
        long linger = core.settings().linger().toNanos();
        try {
            while (true) {
                List<Message> batch = queue.nextBatch(core.settings().maxBatchBytes(), linger,
                        TimeUnit.SECONDS.toNanos(1));
                if (batch.isEmpty()) {
                    if (core.isClosed()) {
                        return;
                    }
                    // a domain the registry does not know goes at once: names from endpoints make no threads
                    if (queue.retireIfIdle(unknownDomain ? 0 : core.settings().idleQueue().toNanos())) {
                        core.retired(queue);
                        return;
                    }
                    continue;
                }
                long pause = post(batch);
                if (pause > 0) {
                    Thread.sleep(pause);
                }
            }
        } catch (InterruptedException stopped) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("{}: the forwarder to {} failed", core.domain(), queue.domain, e);
        }
    }

    /** Posts the batch once; returns how long to wait before the next attempt (0: go on at once). */
    private long post(List<Message> batch) {
        Routes.Target target;
        try {
            target = core.routes().target(queue.domain);
        } catch (Routes.RouteException e) {
            if (e.code == ErrorCode.NO_ROUTE) {
                unknownDomain = true;
                finish(batch, e.code, e.getMessage());
                return 0;
            }
            unknownDomain = false;
            return backoff("looking up domain " + queue.domain + ": " + e.getMessage());
        }
        unknownDomain = false;
        if (target.relayedHere()) {
            // it polls us: hand the batch over, within the bounds of its relay queue
            long size = batch.stream().mapToLong(Message::encodedLength).sum();
            if (!core.relay().queue(queue.domain).hasRoom(size, batch.size())) {
                return RELAY_RETRY_MILLIS;
            }
            core.relay().addAll(queue.domain, batch);
            finish(batch, null, null);
            return 0;
        }
        Request.Builder authorized;
        try {
            authorized = core.authorized(new Request.Builder(), target.domain(), target.url());
        } catch (IllegalArgumentException plaintext) {
            // a setting to fix, not a failure to retry: each sender is told at once, and the log says it once
            if (!target.url().equals(refusedUrl)) {
                refusedUrl = target.url();
                LOG.error("{}: {}", core.domain(), plaintext.getMessage());
            }
            core.metrics().refused.increment();
            finish(batch, ErrorCode.UNAUTHORIZED, core.domain() + " did not send to " + plaintext.getMessage());
            return 0;
        }
        Request request = authorized.url(target.url() + PcCore.MESSAGES_PATH)
                .header(PcCore.DOMAIN_HEADER, core.domain()).post(RequestBody.create(PcCore.encodeAll(batch), GMA))
                .build();
        long start = System.nanoTime();
        try (Response answer = http.newCall(request).execute()) {
            core.metrics().postTook(System.nanoTime() - start);
            int status = answer.code();
            if (status == 200) {
                core.metrics().batchesSent.increment();
                core.metrics().messagesSent.add(batch.size());
                List<Message> errors = core.decodeErrors(answer.body(), batch.size());
                finish(batch, null, null);
                errors.forEach(core::routeOwn);
                return 0;
            }
            String text = text(answer.body());
            if (status == 429 || status == 503) {
                core.metrics().throttledReceived.increment();
                failures.reset();
                long wait = retryAfterMillis(answer.header("Retry-After"));
                List<String> full = fullEndpoints(answer.header(PcCore.FULL_HEADER), batch);
                if (status == 429 && !full.isEmpty()) {
                    // only these endpoints are full: hold their messages back, post the others at once
                    queue.holdBack(full, TimeUnit.MILLISECONDS.toNanos(wait));
                    return 0;
                }
                return wait;
            }
            if (status == 400 || status == 401 || status == 403 || status == 413) {
                core.metrics().refused.increment();
                ErrorCode code = codeOf(text, status);
                LOG.warn("{}: domain {} refused a batch of {} messages with {}: {}", core.domain(), queue.domain,
                        batch.size(), status, text);
                finish(batch, code, "domain " + queue.domain + " refused the batch (" + status + "): " + text);
                return 0;
            }
            core.routes().forget(queue.domain);
            return backoff("domain " + queue.domain + " answered " + status + ": " + text);
        } catch (IOException e) {
            core.metrics().postTook(System.nanoTime() - start);
            core.routes().forget(queue.domain);
            return backoff("posting to domain " + queue.domain + " at " + target.url() + ": " + e.getMessage());
        }
    }

    /** The batch is done: with {@code code} non-null, each message's sender gets that ERROR. */
    private void finish(List<Message> batch, ErrorCode code, String reason) {
        failures.reset();
        if (code != null) {
            for (Message m : batch) {
                core.answer(m, code, reason);
            }
        }
        queue.done();
        core.roomFreed();
    }

    private long backoff(String why) {
        core.metrics().retries.increment();
        long delay = failures.failed();
        LOG.debug("{}: {}; retrying in {} ms", core.domain(), why, delay);
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
    static List<String> fullEndpoints(String header, List<Message> batch) {
        if (header == null || header.isBlank()) {
            return List.of();
        }
        java.util.Set<String> destinations = new java.util.HashSet<>();
        for (Message m : batch) {
            destinations.add(m.to());
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
