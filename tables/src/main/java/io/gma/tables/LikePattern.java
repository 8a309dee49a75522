package io.gma.tables;

import java.util.ArrayList;
import java.util.List;

/**
 * A LIKE pattern, compiled once: {@code %} matches any run of characters (none included), {@code _} exactly one
 * (a Unicode code point), every other character itself, case and all; the ESCAPE character makes the next one
 * literal.
 *
 * <p>The pattern is split at its {@code %}s into segments. The first must match at the start of the value, the
 * last at its end, and each one between at its leftmost place after the one before: for {@code %} patterns the
 * leftmost place is always as good as any, so there is no backtracking, and a match costs at most the value's
 * length times the pattern's. No regular expression, no allocation per value.
 */
final class LikePattern {
    /** A code point the value must have; {@link #ANY} for {@code _}. */
    private static final int ANY = -1;

    /** The segments between {@code %}s, each a run of code points or {@link #ANY}. */
    private final int[][] segments;
    /** Whether the pattern starts with {@code %} (the first segment floats) and ends with one. */
    private final boolean leadingPercent;
    private final boolean trailingPercent;

    private LikePattern(int[][] segments, boolean leadingPercent, boolean trailingPercent) {
        this.segments = segments;
        this.leadingPercent = leadingPercent;
        this.trailingPercent = trailingPercent;
    }

    /**
     * Checks the limits and the escapes.
     *
     * @param escape the ESCAPE code point, or -1
     */
    static void check(String column, String pattern, int escape) {
        if (pattern.length() > TableQuery.MAX_LIKE_CHARS) {
            throw new TableException("the LIKE pattern of " + column + " is " + pattern.length()
                    + " characters, over the limit of " + TableQuery.MAX_LIKE_CHARS);
        }
        if (escape == '%' || escape == '_') {
            throw new TableException("the ESCAPE of the LIKE of " + column + " is " + (char) escape
                    + ", which is a wildcard");
        }
        int wildcards = 0;
        for (int i = 0; i < pattern.length(); i += Character.charCount(pattern.codePointAt(i))) {
            int c = pattern.codePointAt(i);
            if (c == escape) {
                int next = i + Character.charCount(c);
                if (next >= pattern.length()) {
                    throw new TableException("the LIKE pattern of " + column + " ends with its ESCAPE character");
                }
                int escaped = pattern.codePointAt(next);
                if (escaped != '%' && escaped != '_' && escaped != escape) {
                    throw new TableException("the LIKE pattern of " + column + " escapes "
                            + Sql.describeChar(pattern, next) + " at index " + next
                            + "; the ESCAPE character may only precede %, _ or itself");
                }
                i = next;
            } else if (c == '%' || c == '_') {
                wildcards++;
            }
        }
        if (wildcards > TableQuery.MAX_LIKE_WILDCARDS) {
            throw new TableException("the LIKE pattern of " + column + " has " + wildcards + " wildcards (% and _),"
                    + " over the limit of " + TableQuery.MAX_LIKE_WILDCARDS);
        }
    }

    /** Compiles a pattern that {@link #check} passed. */
    static LikePattern compile(String pattern, int escape) {
        List<int[]> segments = new ArrayList<>();
        List<Integer> current = new ArrayList<>();
        boolean leading = false;
        boolean trailing = false;
        for (int i = 0; i < pattern.length(); i += Character.charCount(pattern.codePointAt(i))) {
            int c = pattern.codePointAt(i);
            if (c == escape) {
                i += Character.charCount(c);
                current.add(pattern.codePointAt(i));
            } else if (c == '%') {
                if (segments.isEmpty() && current.isEmpty()) {
                    leading = true;
                } else if (!current.isEmpty()) {
                    segments.add(toArray(current));
                    current.clear();
                }
                trailing = true;
                continue;
            } else {
                current.add(c == '_' ? ANY : c);
            }
            trailing = false;
        }
        if (!current.isEmpty() || segments.isEmpty()) {
            segments.add(toArray(current));
        }
        return new LikePattern(segments.toArray(new int[0][]), leading, trailing);
    }

    private static int[] toArray(List<Integer> list) {
        int[] a = new int[list.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = list.get(i);
        }
        return a;
    }

    boolean matches(String value) {
        int n = value.length();
        int first = 0;
        int last = segments.length - 1;
        int from = 0;
        int to = n;
        if (!leadingPercent) {
            int end = matchAt(segments[0], value, 0, n);
            if (end < 0) {
                return false;
            }
            if (segments.length == 1 && !trailingPercent) {
                return end == n;
            }
            from = end;
            first = 1;
        }
        if (!trailingPercent && first <= last) {
            int start = matchBackwardAt(segments[last], value, n, from);
            if (start < 0) {
                return false;
            }
            to = start;
            last--;
        }
        for (int s = first; s <= last; s++) {
            int end = -1;
            for (int at = from; at <= to; at += at < n ? Character.charCount(value.codePointAt(at)) : 1) {
                end = matchAt(segments[s], value, at, to);
                if (end >= 0) {
                    break;
                }
            }
            if (end < 0) {
                return false;
            }
            from = end;
        }
        return from <= to;
    }

    /** Matches a segment forward from {@code at} within {@code [at, limit)}: the offset after it, or -1. */
    private static int matchAt(int[] segment, String value, int at, int limit) {
        int p = at;
        for (int want : segment) {
            if (p >= limit) {
                return -1;
            }
            int c = value.codePointAt(p);
            if (want != ANY && want != c) {
                return -1;
            }
            p += Character.charCount(c);
        }
        return p <= limit ? p : -1;
    }

    /** Matches a segment backward so that it ends at {@code end}, starting no earlier than {@code floor}. */
    private static int matchBackwardAt(int[] segment, String value, int end, int floor) {
        int p = end;
        for (int k = segment.length - 1; k >= 0; k--) {
            if (p <= floor) {
                return -1;
            }
            int c = value.codePointBefore(p);
            if (segment[k] != ANY && segment[k] != c) {
                return -1;
            }
            p -= Character.charCount(c);
        }
        return p >= floor ? p : -1;
    }
}
