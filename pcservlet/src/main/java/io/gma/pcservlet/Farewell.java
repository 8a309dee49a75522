package io.gma.pcservlet;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PC servlet without a spool, stopping: each message it took and could not deliver within the drain goes back
 * to its sender as ERROR SHUTTING_DOWN, as the acknowledgement it gave promised (docs/pcservlet.md, "Delivery").
 * A sender of this domain gets it on its uplink, still open; a sender of another domain in one last POST to its
 * domain's PC servlet. A sender that cannot be told (its own queue here was given up too, its domain polls this
 * one, or its PC servlet does not answer within the time left) is counted and logged, never silently passed over.
 */
final class Farewell {
    private static final Logger LOG = LoggerFactory.getLogger(Farewell.class);
    /** How long one last POST to a domain may take. */
    static final Duration POST_TIMEOUT = Duration.ofSeconds(2);

    private final String domain;
    private final Routes routes;
    private final TunnelClient tunnel;
    private final LocalQueues local;

    Farewell(String domain, Routes routes, TunnelClient tunnel, LocalQueues local) {
        this.domain = domain;
        this.routes = routes;
        this.tunnel = tunnel;
        this.local = local;
    }

    /**
     * Tells the sender of each of {@code undelivered} (packed messages) that it was not delivered.
     *
     * @return how many senders could not be told (answers, REPLY and ERROR, are never answered: not counted)
     */
    int tell(List<byte[]> undelivered, String why) {
        Map<String, List<Queued>> byDomain = new LinkedHashMap<>();
        for (byte[] packed : undelivered) {
            Command c = Packed.command(packed);
            if (c == Command.REPLY || c == Command.ERROR) {
                continue; // an answer to an answer would go round; the requester's timeout covers it
            }
            String sender = Packed.from(packed);
            Message error = Message.error(Packed.to(packed), sender, Packed.sequence(packed),
                    ErrorCode.SHUTTING_DOWN, Router.sentence(why));
            byDomain.computeIfAbsent(Name.domainOf(sender), k -> new ArrayList<>()).add(Queued.inMemory(error));
        }
        int untold = 0;
        for (Map.Entry<String, List<Queued>> e : byDomain.entrySet()) {
            String d = e.getKey();
            List<Queued> errors = e.getValue();
            if (d.equals(domain)) {
                for (Queued q : errors) {
                    untold += local.offerControl(q.to(), Packed.shared(q.message())) ? 0 : 1;
                }
            } else if (!post(d, errors)) {
                untold += errors.size();
            }
        }
        return untold;
    }

    /** One last POST of {@code errors} to domain {@code d}; whether it took them. */
    private boolean post(String d, List<Queued> errors) {
        try {
            Routes.Target target = routes.target(d);
            if (target.relayedHere()) {
                LOG.warn("{}: {} ERRORs for domain {} are lost: it polls this PC servlet, which is stopping", domain,
                        errors.size(), d);
                return false;
            }
            try (Response answer = tunnel.post(target.domain(), target.url(), BatchCodec.requestBody(errors),
                    POST_TIMEOUT)) {
                if (answer.code() == 200) {
                    return true;
                }
                LOG.warn("{}: domain {} answered {} to the ERRORs of {} messages not delivered", domain, d,
                        answer.code(), errors.size());
            }
        } catch (Routes.RouteException | IOException | IllegalArgumentException e) {
            LOG.warn("{}: could not tell domain {} that {} of its messages were not delivered: {}", domain, d,
                    errors.size(), e.getMessage());
        }
        return false;
    }
}
