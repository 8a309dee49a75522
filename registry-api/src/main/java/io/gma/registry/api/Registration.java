package io.gma.registry.api;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What an endpoint asks the registry for (the body of {@code POST /endpoints}). The registry checks every
 * field and answers 400 naming the one it refuses.
 *
 * @param label the suggested label, 1..64 of [A-Za-z0-9._-]
 * @param domain the endpoint's domain, 1..64 of [A-Za-z0-9.-]
 * @param host the address others connect to
 * @param port the TCP port others connect to, 1..65535
 * @param exact register as {@code label@domain} without a nonce (a well-known service); 409 if taken
 * @param nonce register as {@code label-nonce@domain} with this nonce (6 of [a-z2-7]), to take back a name
 *     whose lease was lost; 409 if taken; null for a nonce chosen by the registry
 * @param lease how long the registration lives unless renewed; null for the registry's default
 * @param attributes free key/value pairs, queryable through the {@code attributes} view
 * @param takeover with {@code exact} or {@code nonce}: replace the live registration of that name if this caller's
 *     identity registered it and it is at this host and port (its endpoint, the caller checked, is gone); 409 if
 *     another identity holds the name, or another host and port. Null: no takeover (409 while the name is live)
 */
public record Registration(String label, Kind kind, String domain, String host, int port, boolean exact,
        String nonce, Duration lease, Map<String, String> attributes, Takeover takeover) {

    public Registration {
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(domain, "domain");
        Objects.requireNonNull(host, "host");
        attributes = Map.copyOf(attributes);
    }

    /** A registration without a takeover, as before there was one. */
    public Registration(String label, Kind kind, String domain, String host, int port, boolean exact, String nonce,
            Duration lease, Map<String, String> attributes) {
        this(label, kind, domain, host, port, exact, nonce, lease, attributes, null);
    }

    /**
     * The registration a takeover replaces, by where its endpoint was registered: the registry replaces it only if
     * it is still there (so of two restarted instances racing for a name, the second finds the first and stops).
     *
     * @param host the host the replaced registration gave
     * @param port its port
     */
    public record Takeover(String host, int port) {
        public Takeover {
            Objects.requireNonNull(host, "host");
        }
    }

    /** This registration, asking for {@code label-nonce@domain}. */
    Registration withNonce(String nonce) {
        return new Registration(label, kind, domain, host, port, exact, nonce, lease, attributes, takeover);
    }

    /** This registration, taking its name over from the registration at the takeover's host and port. */
    Registration withTakeover(Takeover takeover) {
        return new Registration(label, kind, domain, host, port, exact, nonce, lease, attributes, takeover);
    }

    /** Starts a registration of the given kind, label and domain; the rest has defaults. */
    public static Builder builder(Kind kind, String label, String domain) {
        return new Builder(kind, label, domain);
    }

    /** Builds a {@link Registration}. Defaults: host 127.0.0.1, port 0 (must be set), registry's lease. */
    public static final class Builder {
        private final Kind kind;
        private final String label;
        private final String domain;
        private String host = "127.0.0.1";
        private int port;
        private boolean exact;
        private String nonce;
        private Duration lease;
        private Takeover takeover;
        private final Map<String, String> attributes = new LinkedHashMap<>();

        private Builder(Kind kind, String label, String domain) {
            this.kind = kind;
            this.label = label;
            this.domain = domain;
        }

        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder exact(boolean exact) {
            this.exact = exact;
            return this;
        }

        /** Asks for {@code label-nonce@domain}: the name of a registration whose lease was lost. */
        public Builder nonce(String nonce) {
            this.nonce = nonce;
            return this;
        }

        /**
         * With {@link #exact} or {@link #nonce}: take the name over from the live registration at {@code host}
         * and {@code port}, which this caller's identity made and whose endpoint no longer answers (a crash before
         * its lease ran out). The registry cannot tell whether that endpoint is gone: the caller checks.
         */
        public Builder takeOver(String host, int port) {
            this.takeover = new Takeover(host, port);
            return this;
        }

        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        public Builder attribute(String key, String value) {
            attributes.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Registration build() {
            return new Registration(label, kind, domain, host, port, exact, nonce, lease, attributes, takeover);
        }
    }
}
