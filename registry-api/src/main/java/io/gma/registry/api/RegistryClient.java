package io.gma.registry.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * A client of the registry's HTTP API, for endpoints, PC servlets and tools. Thread-safe; share one.
 *
 * <pre>{@code
 * RegistryClient registry = RegistryClient.create("http://127.0.0.1:8080");
 * Lease lease = registry.register(Registration.builder(Kind.PRODUCER, "cpu", "dsg").port(7000).build());
 * QueryResult producers = registry.query("SELECT name FROM producers WHERE domain = 'dsg'");
 * }</pre>
 *
 * <p>Every call throws {@link RegistryException}: with the registry's status and sentence when it refused,
 * or status 0 and code {@code UNREACHABLE} when no answer came, in which case a registration or removal may
 * or may not have taken effect.
 */
public final class RegistryClient {
    /** The path under which the registry's API answers, after its base URL. */
    public static final String API_PATH = "/registry/v1";
    private static final MediaType JSON = MediaType.get("application/json");
    private static final MediaType SQL = MediaType.get("text/plain; charset=utf-8");
    /** The largest answer read: a full query answer (10,000 rows within the registry's size budget) fits. */
    static final int MAX_ANSWER_BYTES = 64 << 20;

    private final HttpUrl api;
    private final OkHttpClient http;
    /** The Authorization header's value, asked for on each call; null, or answering null: none. */
    private final Supplier<String> authorization;

    private RegistryClient(Builder b) {
        this.api = b.api;
        this.http = HttpClients.configure(b.http.newBuilder(), b.security).callTimeout(b.timeout)
                .connectTimeout(b.timeout).readTimeout(b.timeout).writeTimeout(b.timeout).build();
        Supplier<String> token = b.token;
        Security security = b.security;
        this.authorization = token != null ? () -> Security.BEARER + token.get()
                : security.authenticates() ? () -> security.bearer(Security.REGISTRY_AUDIENCE) : null;
    }

    /** A client with default options for the registry at {@code baseUrl} (e.g. http://host:8080). */
    public static RegistryClient create(String baseUrl) {
        return builder(baseUrl).build();
    }

    /**
     * @throws IllegalArgumentException if baseUrl is not an http or https URL
     */
    public static Builder builder(String baseUrl) {
        return new Builder(baseUrl);
    }

    /**
     * Registers an endpoint. A CONFLICT (409) means an exact name (or the asked-for nonce) is taken; with a
     * {@link Registration#takeover()}, that another identity holds it or that it is no longer at the host and port
     * given. A registry older than takeovers refuses one with 400 (unknown field).
     */
    public Lease register(Registration r) throws RegistryException {
        ObjectNode body = Json.MAPPER.createObjectNode().put("label", r.label()).put("kind", r.kind().wireName())
                .put("domain", r.domain()).put("host", r.host()).put("port", r.port()).put("exact", r.exact());
        if (r.nonce() != null) {
            body.put("nonce", r.nonce());
        }
        if (r.takeover() != null) {
            // sent only when asked for: a registry that does not know the field refuses the body
            body.putObject("takeover").put("host", r.takeover().host()).put("port", r.takeover().port());
        }
        if (r.lease() != null) {
            body.put("leaseSeconds", r.lease().toSeconds());
        }
        ObjectNode attributes = body.putObject("attributes");
        r.attributes().forEach(attributes::put);
        JsonNode answer = call(request(url("endpoints")).post(json(body)));
        return new Lease(field(answer, "name").asText(), instant(answer, "expiresAt"));
    }

    /** Renews a lease for its original length. NOT_FOUND (404) means it had expired: register again. */
    public Lease renew(String name) throws RegistryException {
        JsonNode answer = call(request(url("endpoints", name, "lease")).put(RequestBody.create(new byte[0], null)));
        return new Lease(name, instant(answer, "expiresAt"));
    }

    /**
     * Looks up a live endpoint; NOT_FOUND (404) when there is none by that name. Its attributes are empty when
     * the registry does not show them to this caller (they follow the query rules: {@code query} of
     * {@code attributes}); its owner is null when the registry does not say (one older than this client).
     */
    public EndpointInfo lookup(String name) throws RegistryException {
        JsonNode e = call(request(url("endpoints", name)).get());
        Map<String, String> attributes = new LinkedHashMap<>();
        JsonNode shown = e.get("attributes");
        if (shown != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = shown.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> a = it.next();
                attributes.put(a.getKey(), a.getValue().asText());
            }
        }
        String owner = e.hasNonNull("owner") ? e.get("owner").asText() : null;
        Kind kind;
        try {
            kind = Kind.fromWireName(field(e, "kind").asText());
        } catch (IllegalArgumentException bad) {
            throw new RegistryException(200, "MALFORMED_ANSWER", bad.getMessage(), bad);
        }
        return new EndpointInfo(field(e, "name").asText(), field(e, "label").asText(), kind,
                field(e, "domain").asText(), field(e, "host").asText(), field(e, "port").asInt(),
                instant(e, "registeredAt"), instant(e, "expiresAt"), attributes, owner);
    }

    /** Removes an endpoint at once; NOT_FOUND (404) if it had gone already. */
    public void unregister(String name) throws RegistryException {
        call(request(url("endpoints", name)).delete());
    }

    /**
     * Registers or renews a domain: {@code url} for a PC servlet others can reach, or {@code via} for an
     * outbound-only one. CONFLICT (409) when another identity holds the domain.
     *
     * @param lease null for the registry's default
     */
    public Lease registerDomain(String domain, String url, String via, Duration lease) throws RegistryException {
        ObjectNode body = Json.MAPPER.createObjectNode().put("domain", domain).put("url", url).put("via", via);
        if (lease != null) {
            body.put("leaseSeconds", lease.toSeconds());
        }
        JsonNode answer = call(request(url("domains")).post(json(body)));
        return new Lease(domain, instant(answer, "expiresAt"));
    }

    /** Looks up a live domain; NOT_FOUND (404) when there is none by that name. */
    public DomainInfo lookupDomain(String domain) throws RegistryException {
        JsonNode d = call(request(url("domains", domain)).get());
        return new DomainInfo(field(d, "domain").asText(), field(d, "url").isNull() ? null : d.get("url").asText(),
                field(d, "via").isNull() ? null : d.get("via").asText(), instant(d, "registeredAt"),
                instant(d, "expiresAt"));
    }

    /**
     * The registry's health: that it is up, how long it has served and its default lease; a registry older
     * than this client, which says neither, answers zero for both.
     */
    public Health health() throws RegistryException {
        JsonNode h = call(request(url("health")).get());
        return new Health(h.path("status").asText("up"), Duration.ofSeconds(h.path("uptimeSeconds").asLong(0)),
                Duration.ofSeconds(h.path("defaultLeaseSeconds").asLong(0)));
    }

    /**
     * What {@link #health} answers.
     *
     * @param uptime how long the registry has served: a registry restarted in memory knows no lease older than
     *     this (zero when it does not say)
     * @param defaultLease the lease an endpoint gets when it asks for none (zero when it does not say)
     */
    public record Health(String status, Duration uptime, Duration defaultLease) {
    }

    /** Removes a domain's registration. */
    public void unregisterDomain(String domain) throws RegistryException {
        call(request(url("domains", domain)).delete());
    }

    /** Runs one SELECT over the registry's views (see protocol.md section 7). */
    public QueryResult query(String sql) throws RegistryException {
        JsonNode answer = call(request(url("query")).post(RequestBody.create(sql, SQL)));
        List<String> columns = new ArrayList<>();
        field(answer, "columns").forEach(c -> columns.add(c.asText()));
        List<List<Object>> rows = new ArrayList<>();
        for (JsonNode row : field(answer, "rows")) {
            List<Object> values = new ArrayList<>(columns.size());
            row.forEach(v -> values.add(v.isNull() ? null : v.isNumber() ? v.numberValue()
                    : v.isBoolean() ? (Object) v.booleanValue() : v.asText()));
            rows.add(values);
        }
        return new QueryResult(columns, rows, answer.path("truncated").asBoolean(false));
    }

    private static Instant instant(JsonNode answer, String name) throws RegistryException {
        try {
            return Instant.parse(field(answer, name).asText());
        } catch (java.time.format.DateTimeParseException e) {
            throw new RegistryException(200, "MALFORMED_ANSWER", "the registry's \"" + name + "\" is not a time: "
                    + e.getParsedString(), e);
        }
    }

    private HttpUrl url(String... segments) {
        HttpUrl.Builder b = api.newBuilder();
        for (String s : segments) {
            b.addPathSegment(s);
        }
        return b.build();
    }

    private Request.Builder request(HttpUrl url) {
        Request.Builder b = new Request.Builder().url(url).header("Accept", "application/json");
        String credentials = authorization == null ? null : authorization.get();
        if (credentials != null) {
            b.header("Authorization", credentials);
        }
        return b;
    }

    private static RequestBody json(ObjectNode body) {
        try {
            return RequestBody.create(Json.MAPPER.writeValueAsBytes(body), JSON);
        } catch (IOException e) {
            throw new IllegalStateException("a JSON tree failed to serialize", e);
        }
    }

    /** Reads one answer's field, turning an answer that lacks it into a RegistryException, not an NPE. */
    private static JsonNode field(JsonNode answer, String name) throws RegistryException {
        JsonNode value = answer.get(name);
        if (value == null) {
            throw new RegistryException(200, "MALFORMED_ANSWER", "the registry's answer has no \"" + name + "\"",
                    null);
        }
        return value;
    }

    private JsonNode call(Request.Builder builder) throws RegistryException {
        Request request = builder.build();
        String what = request.method() + " " + request.url().encodedPath();
        try (Response response = http.newCall(request).execute()) {
            ResponseBody body = response.body();
            byte[] bytes = body == null ? new byte[0] : body.byteStream().readNBytes(MAX_ANSWER_BYTES + 1);
            if (bytes.length > MAX_ANSWER_BYTES) {
                throw new RegistryException(response.code(), "TOO_LARGE", what + " answered more than "
                        + MAX_ANSWER_BYTES + " bytes", null);
            }
            if (response.isSuccessful()) {
                JsonNode answer = bytes.length == 0 ? Json.MAPPER.createObjectNode() : Json.MAPPER.readTree(bytes);
                if (answer == null || !answer.isObject()) {
                    throw new RegistryException(response.code(), "MALFORMED_ANSWER", what
                            + " answered something that is not a JSON object", null);
                }
                return answer;
            }
            String code = "HTTP_" + response.code();
            String message = what + " answered " + response.code();
            try {
                JsonNode error = Json.MAPPER.readTree(bytes);
                if (error != null && error.has("error")) {
                    code = error.get("error").asText();
                    message = error.path("message").asText(message);
                }
            } catch (IOException notJson) {
                // keep the status line: the answer did not come from a GMA registry
            }
            throw new RegistryException(response.code(), code, message, null);
        } catch (RegistryException e) {
            throw e;
        } catch (IOException e) {
            throw new RegistryException(0, "UNREACHABLE", "registry at " + api + " did not answer " + what + ": "
                    + Unreachable.reason(api, e), e);
        }
    }

    /** Options for {@link RegistryClient}. */
    public static final class Builder {
        private final HttpUrl api;
        private OkHttpClient http = new OkHttpClient();
        private Duration timeout = Duration.ofSeconds(10);
        private Supplier<String> token;
        private Security security = Security.insecure();

        private Builder(String baseUrl) {
            HttpUrl base = HttpUrl.parse(Objects.requireNonNull(baseUrl, "baseUrl"));
            if (base == null) {
                throw new IllegalArgumentException("registry URL \"" + baseUrl + "\" is not an http or https URL");
            }
            HttpUrl.Builder b = base.newBuilder();
            for (String s : API_PATH.substring(1).split("/")) {
                b.addPathSegment(s);
            }
            String path = base.encodedPath();
            this.api = path.endsWith(API_PATH) || path.endsWith(API_PATH + "/") ? base : b.build();
        }

        /** The limit on each call, connect to last byte. Default 10 s; must exceed the registry's query timeout. */
        public Builder timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout " + timeout + " is not positive");
            }
            this.timeout = timeout;
            return this;
        }

        /** Sends {@code Authorization: Bearer <token>} on every call, asking the supplier each time. */
        public Builder bearerToken(Supplier<String> token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /**
         * TLS and credentials: with TLS, the registry's certificate must come from a CA the security trusts and
         * name the URL's host, and the security's certificate (if it has one) is shown for mutual TLS; every call
         * sends the security's {@link Security#bearer token} for the registry, unless {@link #bearerToken} gives
         * another.
         * Default {@link Security#insecure()}: the JDK's CAs for an https URL, no credentials.
         */
        public Builder security(Security security) {
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /** Shares an OkHttpClient's connection pool and dispatcher. Default: a new one. */
        public Builder okHttpClient(OkHttpClient http) {
            this.http = Objects.requireNonNull(http, "http");
            return this;
        }

        /**
         * @throws IllegalArgumentException if the URL is not https while the security is on or a
         *     {@link #bearerToken} is given: a credential would cross the network in plaintext. Nothing was sent.
         */
        public RegistryClient build() {
            if (!api.isHttps() && (security.authenticates() || token != null)) {
                throw new IllegalArgumentException("registry URL " + api + ": expected scheme 'https' but was '"
                        + api.scheme() + "' (" + (token != null ? "a bearer token is given" : "security is on")
                        + ": credentials must not cross the network in plaintext)");
            }
            return new RegistryClient(this);
        }
    }
}
