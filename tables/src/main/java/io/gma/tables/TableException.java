package io.gma.tables;

/**
 * A schema, row or query that breaks the rules of docs/tables.md, told in one sentence that names the value and
 * the limit, as {@code column load1 is DOUBLE, but the row holds a String ("high")} or {@code the IN list of
 * site has 1001 items, over the limit of 1000}. It is the caller's input that is wrong: nothing was sent, and
 * the same call with the same input fails the same way.
 *
 * <p>Bytes from a peer that break the row encoding are an {@link io.gma.wire.ProtocolException} instead.
 */
public final class TableException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** @param message one sentence naming the value and the limit */
    public TableException(String message) {
        super(message);
    }
}
