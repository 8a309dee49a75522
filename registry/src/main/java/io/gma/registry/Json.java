package io.gma.registry;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/** The JSON mappers, and quoting of user values inside error sentences. */
final class Json {
    /** Writes answers. (The registry's client reads them with a mapper of its own, in the registry-api module.) */
    static final ObjectMapper MAPPER = new ObjectMapper();
    /**
     * Reads request bodies: a key given twice in one object is refused, so that no reader of the same body
     * (a proxy, a log, an auditor) can take the other value for the one the registry acted on.
     */
    static final ObjectMapper REQUESTS = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    private static final int MAX_QUOTED = 80;

    private Json() {
    }

    /** A value quoted for an error sentence, cut to 80 characters so that a huge value is not echoed back. */
    static String quote(String value) {
        if (value.length() <= MAX_QUOTED) {
            return "\"" + value + "\"";
        }
        return "\"" + value.substring(0, MAX_QUOTED) + "...\" (" + value.length() + " characters)";
    }
}
