package io.gma.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who may do what, when security is on: one rule per line, anything no rule allows is refused.
 *
 * <pre>
 * # verb     identity     target
 * register   alice        cpu-*@dsg       # register endpoints labelled cpu-... in domain dsg
 * domain     dsg          dsg             # register domain dsg (its PC servlet)
 * send       alice        *@dsg           # send to any endpoint of dsg (looking names up included)
 * post       cardiff      cardiff         # POST batches to this PC servlet as domain cardiff
 * query      *            endpoints,domains
 * table      alice        host_*          # declare monitoring tables named host_... at the registry
 * </pre>
 *
 * <p>Identities are a token's subject, or the CN of a client certificate. Identity and target are patterns:
 * a glob ({@code *} any run of characters, {@code ?} one) or, between slashes, a Java regular expression
 * ({@code /cpu-[0-9]+@dsg/}), matched against the whole value; a comma-separated list matches any of its
 * items. Targets: {@code label@domain} for register, the domain for domain, the destination's name for send,
 * the sending domain (its X-Gma-Domain) for post, the table or view's name for query, the declared table's name
 * for table.
 */
public final class Rules {
    /** What an identity asks to do. */
    public enum Verb {
        REGISTER, DOMAIN, SEND, POST, QUERY, TABLE;

        String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private record Rule(Verb verb, NamePattern identity, NamePattern target) {
    }

    private final List<Rule> rules;
    private final String origin;

    private Rules(List<Rule> rules, String origin) {
        this.rules = rules;
        this.origin = origin;
    }

    /** No rule: everything is refused. */
    public static Rules denyAll() {
        return new Rules(List.of(), "no rules");
    }

    /** Reads a rules file. */
    public static Rules read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.getFileName().toString());
    }

    /**
     * @param origin where the text comes from, named in refusals and errors (a file name)
     * @throws IllegalArgumentException naming the line and what is wrong in it
     */
    public static Rules parse(String text, String origin) {
        List<Rule> rules = new ArrayList<>();
        for (ConfigLines.Line line : ConfigLines.of(text, origin)) {
            String where = line.where();
            String[] words = line.words();
            if (words.length != 3) {
                throw new IllegalArgumentException(where + ": expected 'verb identity target', got " + words.length
                        + " words");
            }
            Verb verb;
            try {
                verb = Verb.valueOf(words[0].toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": unknown verb \"" + words[0]
                        + "\" (register, domain, send, post, query or table)");
            }
            rules.add(new Rule(verb, NamePattern.parse(words[1], where), NamePattern.parse(words[2], where)));
        }
        return new Rules(List.copyOf(rules), origin);
    }

    /** Whether some rule lets {@code identity} do {@code verb} on {@code target}. */
    public boolean allows(String identity, Verb verb, String target) {
        for (Rule r : rules) {
            if (r.verb == verb && r.identity.matches(identity) && r.target.matches(target)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return null when allowed, else the sentence of the refusal, naming the identity, the verb and the target
     */
    public String refusal(String identity, Verb verb, String target) {
        if (allows(identity, verb, target)) {
            return null;
        }
        return "\"" + identity + "\" may not " + describe(verb) + " \"" + target + "\": no " + verb.word()
                + " rule in " + origin + " allows it";
    }

    private static String describe(Verb verb) {
        return switch (verb) {
            case REGISTER -> "register the endpoint";
            case DOMAIN -> "register the domain";
            case SEND -> "send to";
            case POST -> "post as domain";
            case QUERY -> "query the table";
            case TABLE -> "declare the table";
        };
    }

    /** How many rules there are. */
    public int size() {
        return rules.size();
    }

    @Override
    public String toString() {
        return "Rules[" + origin + ", " + rules.size() + " rules]";
    }
}
