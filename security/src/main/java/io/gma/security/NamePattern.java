package io.gma.security;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A pattern over names, as rules and trust files write them: a glob ({@code *} any run of characters,
 * {@code ?} one), a comma-separated list of globs (any of them), or a Java regular expression between slashes
 * ({@code /cpu-[0-9]+@dsg/}), matched against the whole value. Immutable.
 */
final class NamePattern {
    private final List<Pattern> any;
    private final String text;

    private NamePattern(List<Pattern> any, String text) {
        this.any = any;
        this.text = text;
    }

    /**
     * @param where where the text comes from, for errors ("rules line 3")
     * @throws IllegalArgumentException naming {@code where} and what is wrong
     */
    static NamePattern parse(String text, String where) {
        List<Pattern> any = new ArrayList<>();
        if (text.length() > 1 && text.startsWith("/") && text.endsWith("/")) {
            try {
                any.add(Pattern.compile(text.substring(1, text.length() - 1)));
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException(where + ": bad regular expression " + text + ": "
                        + e.getDescription());
            }
            return new NamePattern(List.copyOf(any), text);
        }
        for (String item : text.split(",", -1)) {
            if (item.isEmpty()) {
                throw new IllegalArgumentException(where + ": empty item in \"" + text + "\"");
            }
            any.add(glob(item));
        }
        return new NamePattern(List.copyOf(any), text);
    }

    private static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder();
        for (char c : glob.toCharArray()) {
            if (c == '*') {
                re.append(".*");
            } else if (c == '?') {
                re.append('.');
            } else {
                re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(re.toString());
    }

    boolean matches(String value) {
        for (Pattern p : any) {
            if (p.matcher(value).matches()) {
                return true;
            }
        }
        return false;
    }

    /** The pattern as written. */
    @Override
    public String toString() {
        return text;
    }
}
