package io.gma.registry.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import java.io.IOException;
import java.security.SecureRandom;
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
 * or may not have taken effect. Given the URLs of several registries that share one database, a call goes on to
 * the next when one gives no answer ({@link #builder}).
 */
public final class RegistryClient {
    /** The path under which the registry's API answers, after its base URL. */
    public static final String API_PATH = "/registry/v1";
    private static final MediaType JSON = MediaType.get("application/json");
    private static final MediaType SQL = MediaType.get("text/plain; charset=utf-8");
    /** The body of a PUT or DELETE, as OkHttp's {@code delete()} sends. */
    private static final RequestBody EMPTY = RequestBody.create(new byte[0], null);
    /** The largest answer read: a full query answer (10,000 rows within the registry's size budget) fits. */
    static final int MAX_ANSWER_BYTES = 64 << 20;

    /** Nonces a client with several registries names itself: {@code [a-z2-7]}, as the registry's. */
    private static final char[] NONCE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    private static final int NONCE_LENGTH = 6;
    /** How many nonces a registration tries when the one it chose is taken (one in 10^9 is). */
    private static final int NONCE_ATTEMPTS = 8;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** With several registries, how long a connection to one may take before the call tries the next. */
    private static final Duration CONNECT_WHEN_SEVERAL = Duration.ofSeconds(3);

    private final Failover registries;
    private final OkHttpClient http;
    /** The Authorization header's value, asked for on each call; null, or answering null: none. */
    private final Supplier<String> authorization;

    private RegistryClient(Builder b) {
        this.registries = new Failover(b.apis);
        Duration connect = registries.several() && b.timeout.compareTo(CONNECT_WHEN_SEVERAL) > 0
                ? CONNECT_WHEN_SEVERAL : b.timeout;
        this.http = HttpClients.configure(b.http.newBuilder(), b.security).callTimeout(b.timeout)
                .connectTimeout(connect).readTimeout(b.timeout).writeTimeout(b.timeout).build();
        Supplier<String> token = b.token;
        Security security = b.security;
        this.authorization = token != null ? () -> Security.BEARER + token.get()
                : security.authenticates() ? () -> security.bearer(Security.REGISTRY_AUDIENCE) : null;
    }

    /**
     * A client with default options for the registry at {@code baseUrl} (e.g. http://host:8080), or for several
     * sharing one database ({@code http://a:8080,http://b:8080}): see {@link #builder}.
     */
    public static RegistryClient create(String baseUrl) {
        return builder(baseUrl).build();
    }

    /**
     * Starts a client of one registry, or of several that serve one database (PostgreSQL), given as base URLs
     * separated by commas. With several, every call goes to the first that has not failed lately, and on to the
     * next when it gives no answer ({@code UNREACHABLE}) or 502, 503 or 504; a refusal or a 500 is the database's
     * answer, which every registry would give, and is not sent on. A URL that failed is tried after the others for
     * a while (2 s, doubling to 32 s while it keeps failing). A registration sent on after no answer is made
     * harmless to send twice: see {@link #register}. docs/registry.md, "Several registries".
     *
     * @param baseUrls {@code http://host:port} or {@code https://...}, or several separated by commas
     * @throws IllegalArgumentException if an entry is empty, is not an http or https URL, or is given twice
     */
    public static Builder builder(String baseUrls) {
        return new Builder(baseUrls);
    }

    /**
     * The base URLs of a list as {@link #builder} reads it: split at commas, blanks around each trimmed.
     *
     * @throws IllegalArgumentException if an entry is empty, is not an http or https URL, or is given twice
     */
    public static List<String> baseUrls(String baseUrls) {
        Objects.requireNonNull(baseUrls, "baseUrls");
        List<String> urls = new ArrayList<>();
        String[] entries = baseUrls.split(",", -1);
        for (int i = 0; i < entries.length; i++) {
            String url = entries[i].trim();
            if (url.isEmpty()) {
                throw new IllegalArgumentException("registry URLs \"" + baseUrls + "\": entry " + (i + 1)
                        + " is empty (give base URLs separated by commas)");
            }
            if (HttpUrl.parse(url) == null) {
                throw new IllegalArgumentException("registry URL \"" + url + "\" is not an http or https URL");
            }
            if (urls.contains(url)) {
                throw new IllegalArgumentException("registry URLs \"" + baseUrls + "\": " + url + " is given twice");
            }
            urls.add(url);
        }
        return urls;
    }

    /**
     * Registers an endpoint. A CONFLICT (409) means an exact name (or the asked-for nonce) is taken; with a
     * {@link Registration#takeover()}, that another identity holds it or that it is no longer at the host and port
     * given. A registry older than takeovers refuses one with 400 (unknown field).
     *
     * <p>With several registries a registration that got no answer from one may have been stored by it, and is
     * sent to the next. So that this is harmless: a registration without a name of its own (neither exact nor a
     * nonce) gets a nonce chosen here, so that every registry is asked for the same name (when it is taken, another
     * is chosen, as the registry does); and when a registry answers 409 for the name after another failed the call,
     * the name is taken over from the registration of the same identity at this registration's own host and port,
     * which is this call's (only one endpoint can listen there). Another holder keeps the name, and the 409 is
     * thrown.
     */
    public Lease register(Registration r) throws RegistryException {
        if (!registries.several() || r.exact() || r.nonce() != null) {
            return registerNamed(r);
        }
        for (int attempt = 1;; attempt++) {
            try {
                return registerNamed(r.withNonce(nonce()));
            } catch (RegistryException taken) {
                if (taken.status() != 409 || attempt == NONCE_ATTEMPTS) {
                    throw taken;
                }
            }
        }
    }

    /** Registers, and with several registries takes the name back from this very call when one sent it on. */
    private Lease registerNamed(Registration r) throws RegistryException {
        try {
            return post(r);
        } catch (RegistryException taken) {
            if (taken.status() != 409 || taken.getSuppressed().length == 0) {
                throw taken;
            }
            // sent on after a registry gave no answer: the name may be this call's own, stored by that registry
            try {
                return post(r.withTakeover(new Registration.Takeover(r.host(), r.port())));
            } catch (RegistryException refused) {
                if (refused.status() == 409 || refused.status() == 400) {
                    throw taken; // held elsewhere (or a registry older than takeovers): the name is taken
                }
                throw refused;
            }
        }
    }

    private static String nonce() {
        char[] nonce = new char[NONCE_LENGTH];
        for (int i = 0; i < nonce.length; i++) {
            nonce[i] = NONCE_ALPHABET[RANDOM.nextInt(NONCE_ALPHABET.length)];
        }
        return new String(nonce);
    }

    private Lease post(Registration r) throws RegistryException {
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
        JsonNode answer = call("POST", json(body), "endpoints");
        return new Lease(field(answer, "name").asText(), instant(answer, "expiresAt"));
    }

    /** Renews a lease for its original length. NOT_FOUND (404) means it had expired: register again. */
    public Lease renew(String name) throws RegistryException {
        JsonNode answer = call("PUT", EMPTY, "endpoints", name, "lease");
        return new Lease(name, instant(answer, "expiresAt"));
    }

    /**
     * Looks up a live endpoint; NOT_FOUND (404) when there is none by that name. Its attributes are empty when
     * the registry does not show them to this caller (they follow the query rules: {@code query} of
     * {@code attributes}); its owner is null when the registry does not say (one older than this client).
     */
    public EndpointInfo lookup(String name) throws RegistryException {
        JsonNode e = call("GET", null, "endpoints", name);
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

    /**
     * Removes an endpoint at once; NOT_FOUND (404) if it had gone already (with several registries, perhaps removed
     * by one that gave no answer: the exception's suppressed failures say so).
     */
    public void unregister(String name) throws RegistryException {
        call("DELETE", EMPTY, "endpoints", name);
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
        JsonNode answer = call("POST", json(body), "domains");
        return new Lease(domain, instant(answer, "expiresAt"));
    }

    /** Looks up a live domain; NOT_FOUND (404) when there is none by that name. */
    public DomainInfo lookupDomain(String domain) throws RegistryException {
        JsonNode d = call("GET", null, "domains", domain);
        return new DomainInfo(field(d, "domain").asText(), field(d, "url").isNull() ? null : d.get("url").asText(),
                field(d, "via").isNull() ? null : d.get("via").asText(), instant(d, "registeredAt"),
                instant(d, "expiresAt"));
    }

    /**
     * The registry's health: that it is up, how long it has served and its default lease; a registry older
     * than this client, which says neither, answers zero for both.
     */
    public Health health() throws RegistryException {
        JsonNode h = call("GET", null, "health");
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
        call("DELETE", EMPTY, "domains", domain);
    }

    /**
     * Declares a table: its columns and primary key (docs/registry.md, "Tables"). Declaring again what the registry
     * holds already is harmless, so a producer declares its tables every time it starts.
     *
     * @return true when the registry stored the table now, false when it held the same declaration already
     * @throws RegistryException BAD_REQUEST (400) naming a name or a limit it refuses; CONFLICT (409) when the
     *     registry holds the table with other columns, types or key, naming the difference ({@code table host_cpu:
     *     column load1 is DOUBLE here, INTEGER in the registry}); FORBIDDEN (403) when no {@code table} rule lets
     *     this identity declare it. With no answer (UNREACHABLE) the table may or may not be stored: declare again
     */
    public boolean declareTable(TableDeclaration table) throws RegistryException {
        ObjectNode body = Json.MAPPER.createObjectNode().put("name", table.name());
        ArrayNode columns = body.putArray("columns");
        for (ColumnDeclaration c : table.columns()) {
            columns.addObject().put("name", c.name()).put("type", c.type().name());
        }
        ArrayNode key = body.putArray("primaryKey");
        table.primaryKey().forEach(key::add);
        JsonNode answer = call("POST", json(body), "tables");
        return field(answer, "created").asBoolean();
    }

    /**
     * Looks up a declared table: its columns and key as first declared, who declared it and when.
     *
     * @throws RegistryException NOT_FOUND (404) when no table has the name; FORBIDDEN (403) unless this identity may
     *     query both {@code tables} and {@code table_columns}
     */
    public TableInfo table(String name) throws RegistryException {
        JsonNode t = call("GET", null, "tables", name);
        List<ColumnDeclaration> columns = new ArrayList<>();
        for (JsonNode c : field(t, "columns")) {
            ColumnType type;
            try {
                type = ColumnType.valueOf(field(c, "type").asText());
            } catch (IllegalArgumentException bad) {
                throw new RegistryException(200, "MALFORMED_ANSWER", "the registry's column type \""
                        + c.path("type").asText() + "\" is not one of " + List.of(ColumnType.values()), bad);
            }
            columns.add(new ColumnDeclaration(field(c, "name").asText(), type));
        }
        List<String> key = new ArrayList<>();
        field(t, "primaryKey").forEach(k -> key.add(k.asText()));
        return new TableInfo(new TableDeclaration(field(t, "name").asText(), columns, key),
                field(t, "declaredBy").asText(), instant(t, "declaredAt"));
    }

    /**
     * Says that the live producer {@code producer} publishes a declared table, or replaces what it said of it
     * before (predicate, retention periods). It publishes it while its registration lives: a lease that runs out,
     * a removal or a takeover ends every publication of it, and a producer registered again publishes again.
     *
     * @param producer the producer's registered name
     * @throws RegistryException NOT_FOUND (404) when no live endpoint has the name or no table is declared with the
     *     publication's; BAD_REQUEST (400) for a consumer, a predicate or period out of bounds; FORBIDDEN (403) when
     *     another identity registered the producer, or no {@code register} rule lets this one register it. With no
     *     answer (UNREACHABLE) it may or may not be stored: publishing again is harmless
     */
    public void publish(String producer, Publication publication) throws RegistryException {
        ObjectNode body = Json.MAPPER.createObjectNode();
        if (publication.predicate() != null) {
            body.put("predicate", publication.predicate());
        }
        body.put("latestRetentionSeconds", publication.latestRetention().toSeconds())
                .put("historyRetentionSeconds", publication.historyRetention().toSeconds());
        if (publication.archive()) {
            body.put("archive", true);
        }
        call("PUT", json(body), "endpoints", producer, "tables", publication.table());
    }

    /** Runs one SELECT over the registry's views (see protocol.md section 7). */
    public QueryResult query(String sql) throws RegistryException {
        JsonNode answer = call("POST", RequestBody.create(sql, SQL), "query");
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

    /** Makes a call at the registries in turn ({@link Failover}); {@code body} null for GET. */
    private JsonNode call(String method, RequestBody body, String... segments) throws RegistryException {
        return registries.call(api -> exchange(api, request(api, method, body, segments)));
    }

    private Request request(HttpUrl api, String method, RequestBody body, String... segments) {
        HttpUrl.Builder url = api.newBuilder();
        for (String s : segments) {
            url.addPathSegment(s);
        }
        Request.Builder b = new Request.Builder().url(url.build()).method(method, body)
                .header("Accept", "application/json");
        String credentials = authorization == null ? null : authorization.get();
        if (credentials != null) {
            b.header("Authorization", credentials);
        }
        return b.build();
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

    /** One attempt of a call, at the registry whose API is at {@code api}. */
    private JsonNode exchange(HttpUrl api, Request request) throws RegistryException {
        String what = request.method() + " " + request.url().encodedPath();
        try (Response response = http.newCall(request).execute()) {
            ResponseBody body = response.body();
            byte[] bytes = body == null ? new byte[0] : body.byteStream().readNBytes(MAX_ANSWER_BYTES + 1);
            if (bytes.length > MAX_ANSWER_BYTES) {
                throw new RegistryException(response.code(), "TOO_LARGE", what + " answered more than "
                        + MAX_ANSWER_BYTES + " bytes", null);
            }
            if (response.isSuccessful()) {
                JsonNode answer;
                try {
                    answer = bytes.length == 0 ? Json.MAPPER.createObjectNode() : Json.MAPPER.readTree(bytes);
                } catch (JsonProcessingException notJson) {
                    // an answer that came, not a registry that did not answer: not UNREACHABLE
                    throw new RegistryException(response.code(), "MALFORMED_ANSWER", what + " answered "
                            + response.code() + " with something that is not JSON ("
                            + notJson.getOriginalMessage() + "): is this URL a GMA registry's?", null);
                }
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
        /** The API URLs, in the order given. */
        private final List<HttpUrl> apis = new ArrayList<>();
        private OkHttpClient http = new OkHttpClient();
        private Duration timeout = Duration.ofSeconds(10);
        private Supplier<String> token;
        private Security security = Security.insecure();

        private Builder(String baseUrls) {
            for (String url : baseUrls(Objects.requireNonNull(baseUrls, "baseUrl"))) {
                HttpUrl base = HttpUrl.get(url);
                HttpUrl.Builder b = base.newBuilder();
                for (String s : API_PATH.substring(1).split("/")) {
                    b.addPathSegment(s);
                }
                String path = base.encodedPath();
                apis.add(path.endsWith(API_PATH) || path.endsWith(API_PATH + "/") ? base : b.build());
            }
        }

        /**
         * The limit on each call, connect to last byte. Default 10 s; must exceed the registry's query timeout.
         * With several registries it is the limit of each attempt, and connecting to one takes at most 3 s (then
         * the next is tried), so that an unreachable host holds a call up for seconds, not for the whole limit.
         */
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
         * @throws IllegalArgumentException if a URL is not https while the security is on or a
         *     {@link #bearerToken} is given: a credential would cross the network in plaintext. Nothing was sent.
         */
        public RegistryClient build() {
            for (HttpUrl api : apis) {
                if (!api.isHttps() && (security.authenticates() || token != null)) {
                    throw new IllegalArgumentException("registry URL " + api + ": expected scheme 'https' but was '"
                            + api.scheme() + "' (" + (token != null ? "a bearer token is given" : "security is on")
                            + ": credentials must not cross the network in plaintext)");
                }
            }
            return new RegistryClient(this);
        }
    }
}
