package io.gma.pcservlet;

import io.gma.internal.link.Backoff;
import io.gma.wire.Message;
import java.io.IOException;
import java.util.List;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an outbound-only domain receives: a long poll to its via domain's PC servlet, again and again
 * (PROTOCOL.md section 6). A batch is acknowledged, in the next poll, only once it is queued here whole; until
 * then the relay keeps it and answers it again.
 */
final class Poller implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);
    static final int WAIT_SECONDS = 30;

    private final PcCore core;
    private final OkHttpClient http;
    private String ack = "";
    /** Failed polls in a row, and the delay before the next: as the forwarder's. */
    private final Backoff failures = new Backoff(Forwarder.MIN_BACKOFF, Forwarder.MAX_BACKOFF);
    /** The last URL refused for want of TLS, logged once (null: none). */
    private String refusedUrl;

    Poller(PcCore core) {
        this.core = core;
        this.http = core.http();
    }

    @Override
    public void run() {
        String via = core.settings().via();
        while (!core.isStopping() && !Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(pollOnce(via));
            } catch (InterruptedException stopped) {
                return;
            }
        }
    }

    /** One poll; the pause before the next (0: at once). */
    private long pollOnce(String via) {
        String base;
        try {
            base = core.routes().target(via).url(); // an outbound-only domain's target is its via's PC servlet
        } catch (Routes.RouteException e) {
            return backoff("looking up the via domain " + via + ": " + e.getMessage());
        }
        HttpUrl url = HttpUrl.get(base + PcCore.MESSAGES_PATH).newBuilder()
                .addQueryParameter("domain", core.domain()).addQueryParameter("wait", Integer.toString(WAIT_SECONDS))
                .addQueryParameter("ack", ack).build();
        Request.Builder authorized;
        try {
            authorized = core.authorized(new Request.Builder(), via, base);
        } catch (IllegalArgumentException plaintext) {
            if (!base.equals(refusedUrl)) {
                refusedUrl = base;
                LOG.error("{}: not polling: {}", core.domain(), plaintext.getMessage());
            }
            return backoff(plaintext.getMessage());
        }
        Request request = authorized.url(url).header(PcCore.DOMAIN_HEADER, core.domain()).get().build();
        try (Response answer = http.newCall(request).execute()) {
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
            String id = answer.header(PcCore.BATCH_HEADER);
            if (id == null) {
                return backoff("via " + via + " answered a poll without " + PcCore.BATCH_HEADER);
            }
            List<Message> batch = core.decodeBatch(answer.body());
            if (batch == null) {
                return backoff("via " + via + " answered a batch that cannot be read whole");
            }
            failures.reset();
            if (core.admitPolled(batch)) {
                ack = id;
                return 0;
            }
            return 200; // no room here yet: poll again soon, without the ack, and get the same batch
        } catch (IOException e) {
            core.routes().forget(via);
            return backoff("polling via " + via + ": " + e.getMessage());
        }
    }

    private long backoff(String why) {
        core.metrics().retries.increment();
        long delay = failures.failed();
        LOG.debug("{}: {}; polling again in {} ms", core.domain(), why, delay);
        return delay;
    }
}
