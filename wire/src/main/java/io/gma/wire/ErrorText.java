package io.gma.wire;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code CODE sentence}: the data of an ERROR message (protocol.md section 2), and the text body of a PC
 * servlet's refusal of a POST (section 6). The code's name, one space, then a human sentence, in UTF-8:
 *
 * <pre>
 *   NO_ROUTE no endpoint named "cpu-7x2kqa@dsg" is registered
 *   \______/^\______________________________________________/
 *     code  one space               sentence
 * </pre>
 *
 * <p>An immutable value; {@link #text()} and {@link #toBytes()} format it, {@link #parse(String, ErrorCode)}
 * reads it back, and {@code parse(e.text())} equals {@code e} for every ErrorText {@code e}.
 *
 * @param code the error code
 * @param sentence what went wrong, naming the value and the limit; may be empty, never null
 */
public record ErrorText(ErrorCode code, String sentence) {
    private static final Map<String, ErrorCode> CODES = new HashMap<>();

    static {
        for (ErrorCode c : ErrorCode.values()) {
            CODES.put(c.name(), c);
        }
    }

    /**
     * @throws NullPointerException if {@code code} or {@code sentence} is null
     */
    public ErrorText {
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(sentence, "sentence");
    }

    /**
     * Reads {@code CODE sentence}, as {@link #parse(String, ErrorCode)} with INTERNAL for a text that names no
     * known code: {@code "MAYBE later"} reads as INTERNAL with the sentence {@code "MAYBE later"}.
     *
     * @throws NullPointerException if {@code text} is null
     */
    public static ErrorText parse(String text) {
        return parse(text, ErrorCode.INTERNAL);
    }

    /**
     * Reads {@code CODE sentence}. The code is the text before the first space, and the sentence all after
     * that space; a text without a space that is a code's name alone reads as that code with an empty
     * sentence. A text that names no {@link ErrorCode} first (a newer peer's code, a proxy's page, a space
     * first, an empty text) reads as {@code fallback} with the whole text as its sentence, so nothing the
     * peer said is lost. Codes are matched exactly, upper case; nothing is trimmed.
     *
     * <pre>
     *   "TIMEOUT no answer in 5 s"   TIMEOUT, "no answer in 5 s"
     *   "TIMEOUT "                   TIMEOUT, ""
     *   "TIMEOUT"                    TIMEOUT, ""
     *   "SLOW_DOWN now"              fallback, "SLOW_DOWN now"
     *   "timeout x"                  fallback, "timeout x"
     * </pre>
     *
     * @param fallback the code of a text that names none
     * @throws NullPointerException if {@code text} or {@code fallback} is null
     */
    public static ErrorText parse(String text, ErrorCode fallback) {
        Objects.requireNonNull(fallback, "fallback");
        int space = text.indexOf(' ');
        ErrorCode code = CODES.get(space > 0 ? text.substring(0, space) : text);
        if (code == null) {
            return new ErrorText(fallback, text);
        }
        return new ErrorText(code, space > 0 ? text.substring(space + 1) : "");
    }

    /** {@code CODE sentence}, as {@code TIMEOUT no answer in 5 s}. */
    public String text() {
        return code.name() + " " + sentence;
    }

    /** {@link #text()} in UTF-8: an ERROR message's data. A new array on each call; the caller owns it. */
    public byte[] toBytes() {
        return text().getBytes(StandardCharsets.UTF_8);
    }

    /** {@link #text()}. */
    @Override
    public String toString() {
        return text();
    }
}
