package io.gma.registry.api;

import java.util.Locale;

/** What an endpoint is: a producer or a consumer of events (the registry's {@code kind} column). */
public enum Kind {
    PRODUCER, CONSUMER;

    /** {@code producer} or {@code consumer}, as in JSON and SQL. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException for anything but {@code producer} or {@code consumer} */
    public static Kind fromWireName(String name) {
        for (Kind kind : values()) {
            if (kind.wireName().equals(name)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("kind \"" + name + "\" is not \"producer\" or \"consumer\"");
    }
}
