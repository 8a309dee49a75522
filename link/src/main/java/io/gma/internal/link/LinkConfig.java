package io.gma.internal.link;

import io.gma.security.Security;
import io.gma.wire.WireCodec;
import java.time.Duration;
import java.util.Objects;

/**
 * What every link of one owner (an endpoint, or a PC servlet's uplink side) shares; it replaces the owner
 * interface a link used to ask.
 *
 * @param name the owner's name, said in HELLO and WELCOME and the {@code from} of every message a link makes
 *     (ACK, PING, PONG, BYE, a closing ERROR)
 * @param audience the audience of the tokens its peers show it: an endpoint's name, or a PC servlet's domain (a
 *     token made for another is refused)
 * @param security TLS for its links, and how it checks its peers' credentials
 * @param codec the limits of what its links decode
 * @param pingInterval a PING after this long without traffic; a peer silent for three is dead
 * @param counters where its links and queues count
 * @param limit the most links it holds open at once, both ways
 */
public record LinkConfig(String name, String audience, Security security, WireCodec codec, Duration pingInterval,
        LinkCounters counters, LinkLimit limit) {
    /**
     * @throws NullPointerException if a value is null
     * @throws IllegalArgumentException if pingInterval is not positive
     */
    public LinkConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(audience, "audience");
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(counters, "counters");
        Objects.requireNonNull(limit, "limit");
        if (pingInterval.isNegative() || pingInterval.isZero()) {
            throw new IllegalArgumentException("pingInterval " + pingInterval + " is not positive");
        }
    }
}
