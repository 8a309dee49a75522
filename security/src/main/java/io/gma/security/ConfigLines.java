package io.gma.security;

import java.util.ArrayList;
import java.util.List;

/**
 * The lines of a rules or trust file: {@code #} starts a comment, blank lines are skipped, and each other line
 * is split into words at white space.
 */
final class ConfigLines {
    /** One line's words, and where it stands ("rules line 3"), for errors. */
    record Line(String where, String[] words) {
    }

    private ConfigLines() {
    }

    /** @param origin where the text comes from (a file name) */
    static List<Line> of(String text, String origin) {
        List<Line> out = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.strip();
            if (!line.isEmpty()) {
                out.add(new Line(origin + " line " + (i + 1), line.split("\\s+")));
            }
        }
        return out;
    }
}
