package io.gma.registry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.Kind;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads and checks request bodies. Every refusal is a 400 whose sentence names the field, the value and
 * the rule, such as {@code port 70000 is outside 1..65535}.
 */
final class Requests {
    static final int MAX_ATTRIBUTES = 64;
    static final int MAX_ATTRIBUTE_VALUE = 1024;
    static final int MAX_HOST = 255;
    static final int MAX_URL = 2048;
    private static final int MAX_PORT = 65535;
    private static final Set<String> ENDPOINT_FIELDS = Set.of("label", "kind", "domain", "host", "port", "exact",
            "nonce", "leaseSeconds", "attributes", "takeover");
    private static final Set<String> TAKEOVER_FIELDS = Set.of("host", "port");
    private static final Set<String> DOMAIN_FIELDS = Set.of("domain", "url", "via", "leaseSeconds");
    /** How Jackson's STRICT_DUPLICATE_DETECTION words its refusal (JsonReadContext._checkDup). */
    private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '(.*)'", Pattern.DOTALL);

    /** A checked domain registration. */
    record NewDomain(String domain, String url, String via, int leaseSeconds) {
    }

    private final int defaultLeaseSeconds;
    private final int maxLeaseSeconds;

    Requests(int defaultLeaseSeconds, int maxLeaseSeconds) {
        this.defaultLeaseSeconds = defaultLeaseSeconds;
        this.maxLeaseSeconds = maxLeaseSeconds;
    }

    EndpointStore.NewEndpoint endpoint(byte[] body) {
        JsonNode json = object(body, ENDPOINT_FIELDS);
        String label = Names.label("label", text(json, "label"));
        String kindText = text(json, "kind");
        Kind kind;
        try {
            kind = Kind.fromWireName(kindText);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("kind " + Json.quote(kindText) + " is not \"producer\" or \"consumer\"");
        }
        String domain = Names.domain("domain", text(json, "domain"));
        String host = host(json, "host");
        int port = integer(json, "port", 1, MAX_PORT, null);
        boolean exact = json.has("exact") && bool(json, "exact");
        String nonce = json.has("nonce") && !json.get("nonce").isNull() ? Names.givenNonce(text(json, "nonce")) : null;
        if (exact && nonce != null) {
            throw ApiException.badRequest("give at most one of exact (label@domain) and nonce (label-nonce@domain)");
        }
        int lease = integer(json, "leaseSeconds", 1, maxLeaseSeconds, defaultLeaseSeconds);
        EndpointStore.Takeover takeover = takeover(json);
        if (takeover != null && !exact && nonce == null) {
            throw ApiException.badRequest("takeover needs exact (label@domain) or nonce (label-nonce@domain): a name"
                    + " the registry chooses is new, and there is nothing to take over");
        }
        return new EndpointStore.NewEndpoint(label, kind, domain, host, port, exact, nonce, lease,
                attributes(json), takeover);
    }

    /**
     * The optional {@code "takeover": {"host", "port"}} of a registration (an addition to protocol.md section 7):
     * where the registration to replace is; null when absent.
     */
    private static EndpointStore.Takeover takeover(JsonNode json) {
        JsonNode node = json.get("takeover");
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("takeover " + Json.quote(node.toString()) + " is not an object with host"
                    + " and port");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext();) {
            String field = it.next();
            if (!TAKEOVER_FIELDS.contains(field)) {
                throw ApiException.badRequest("unknown field " + Json.quote(field) + " in takeover; its fields are "
                        + new java.util.TreeSet<>(TAKEOVER_FIELDS));
            }
        }
        return new EndpointStore.Takeover(host(node, "host"), integer(node, "port", 1, MAX_PORT, null));
    }

    private static String host(JsonNode json, String field) {
        String host = text(json, field);
        if (host.isEmpty() || host.length() > MAX_HOST || !host.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
            throw ApiException.badRequest(field + " " + Json.quote(host) + " is not 1.." + MAX_HOST
                    + " printable ASCII characters without spaces");
        }
        return host;
    }

    NewDomain domain(byte[] body) {
        JsonNode json = object(body, DOMAIN_FIELDS);
        String domain = Names.domain("domain", text(json, "domain"));
        String url = json.has("url") && !json.get("url").isNull() ? url(text(json, "url")) : null;
        String via = json.has("via") && !json.get("via").isNull() ? Names.domain("via", text(json, "via")) : null;
        if ((url == null) == (via == null)) {
            throw ApiException.badRequest("give exactly one of url (a PC servlet others can reach) and via (the"
                    + " domain an outbound-only PC servlet relays through)");
        }
        if (domain.equals(via)) {
            throw ApiException.badRequest("via " + Json.quote(via) + " is the domain itself");
        }
        return new NewDomain(domain, url, via, integer(json, "leaseSeconds", 1, maxLeaseSeconds, defaultLeaseSeconds));
    }

    static JsonNode object(byte[] body, Set<String> known) {
        JsonNode json;
        try {
            json = Json.REQUESTS.readTree(body);
        } catch (JsonProcessingException e) {
            // getOriginalMessage: Jackson's sentence without its "[Source: ...; line: 1, column: 9]" suffix
            Matcher duplicate = DUPLICATE.matcher(e.getOriginalMessage());
            if (duplicate.matches()) {
                throw ApiException.badRequest("duplicate field " + Json.quote(duplicate.group(1)) + " in the body");
            }
            throw ApiException.badRequest("body is not valid JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw ApiException.badRequest("body could not be read as JSON");
        }
        if (json == null || !json.isObject()) {
            throw ApiException.badRequest("body is not a JSON object");
        }
        for (Iterator<String> it = json.fieldNames(); it.hasNext();) {
            String field = it.next();
            if (!known.contains(field)) {
                throw ApiException.badRequest("unknown field " + Json.quote(field) + "; the fields are "
                        + new java.util.TreeSet<>(known));
            }
        }
        return json;
    }

    static String text(JsonNode json, String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (!value.isTextual()) {
            throw ApiException.badRequest(field + " " + Json.quote(value.toString()) + " is not a string");
        }
        return value.textValue();
    }

    private static boolean bool(JsonNode json, String field) {
        JsonNode value = json.get(field);
        if (!value.isBoolean()) {
            throw ApiException.badRequest(field + " " + Json.quote(value.toString()) + " is not true or false");
        }
        return value.booleanValue();
    }

    static int integer(JsonNode json, String field, int min, int max, Integer otherwise) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            if (otherwise == null) {
                throw ApiException.badRequest(field + " is missing");
            }
            return otherwise;
        }
        if (!value.isIntegralNumber()) {
            throw ApiException.badRequest(field + " " + Json.quote(value.toString()) + " is not a whole number");
        }
        if (!value.canConvertToLong() || value.longValue() < min || value.longValue() > max) {
            throw ApiException.badRequest(field + " " + value + " is outside " + min + ".." + max);
        }
        return value.intValue();
    }

    private static Map<String, String> attributes(JsonNode json) {
        JsonNode node = json.get("attributes");
        Map<String, String> attributes = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return attributes;
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("attributes is not a JSON object of strings");
        }
        if (node.size() > MAX_ATTRIBUTES) {
            throw ApiException.badRequest("attributes has " + node.size() + " entries, over the limit of "
                    + MAX_ATTRIBUTES);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = Names.attributeKey(e.getKey());
            if (!e.getValue().isTextual()) {
                throw ApiException.badRequest("attribute " + key + " is not a string");
            }
            String value = e.getValue().textValue();
            if (value.indexOf('\u0000') >= 0) {
                throw ApiException.badRequest("attribute " + key + " contains a NUL character");
            }
            if (value.length() > MAX_ATTRIBUTE_VALUE) {
                throw ApiException.badRequest("attribute " + key + " is " + value.length()
                        + " characters, over the limit of " + MAX_ATTRIBUTE_VALUE);
            }
            attributes.put(key, value);
        }
        return attributes;
    }

    private static String url(String url) {
        if (url.length() > MAX_URL) {
            throw ApiException.badRequest("url is " + url.length() + " characters, over the limit of " + MAX_URL);
        }
        try {
            URI uri = new URI(url);
            String scheme = uri.getScheme();
            if (("http".equals(scheme) || "https".equals(scheme)) && uri.getHost() != null
                    && uri.getRawQuery() == null && uri.getRawFragment() == null) {
                if (uri.getPort() == 0 || uri.getPort() > MAX_PORT) { // URI takes any digits; a POST to it fails
                    throw ApiException.badRequest("url " + Json.quote(url) + " has port " + uri.getPort()
                            + ", outside 1.." + MAX_PORT);
                }
                return url;
            }
        } catch (URISyntaxException e) {
            // refused below with the same sentence as any other bad URL
        }
        throw ApiException.badRequest("url " + Json.quote(url) + " is not an absolute http or https URL without"
                + " query or fragment");
    }
}
