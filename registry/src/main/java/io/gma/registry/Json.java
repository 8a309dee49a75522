package io.gma.registry;

import com.fasterxml.jackson.databind.ObjectMapper;

/** The one JSON mapper, and quoting of user values inside error sentences. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();
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
