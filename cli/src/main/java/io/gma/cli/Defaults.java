package io.gma.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;

/**
 * Where an option's value comes from when its flag is not given, first found first:
 *
 * <pre>
 *   GMA_&lt;COMMAND&gt;_&lt;OPTION&gt;   environment (GMA_PC_HTTP_PORT for gma pc --http-port)
 *   GMA_&lt;OPTION&gt;             environment (GMA_REGISTRY for --registry)
 *   &lt;command&gt;.&lt;option&gt;      properties file (pc.http-port)
 *   &lt;option&gt;                properties file (registry)
 *   the option's own default
 * </pre>
 *
 * The properties file is GMA_CONFIG, else ~/.gma.properties when it exists. The command is named as in its
 * {@code @Command} annotation ({@code pc}), also when a program of its own shows it under another name
 * ({@link Cli#standalone}).
 */
public final class Defaults implements CommandLine.IDefaultValueProvider {
    static final String FOOTER = "%nEvery option may also come from the environment, GMA_<COMMAND>_<OPTION> or"
            + " GMA_<OPTION> (GMA_PC_HTTP_PORT, GMA_REGISTRY), or from a properties file (GMA_CONFIG, default"
            + " ~/.gma.properties) with keys <command>.<option> or <option> (pc.http-port, registry); a flag wins"
            + " over the environment, which wins over the file.";

    /** Variables GMA reads that are no command's option: never taken for misspelt ones. */
    static final Set<String> OTHER_VARIABLES = Set.of("GMA_CONFIG", "GMA_JDBC_PASSWORD", "GMA_KEYS_STOREPASS",
            "GMA_BENCH_JVM", "GMA_REQUIRE_TMPFS", "GMA_REQUIRE_NATS", "GMA_REQUIRE_BROWSER", "GMA_REQUIRE_POSTGRES",
            "GMA_TEST_POSTGRES_URL", "GMA_PG_DIR", "GMA_PG_RUN", "GMA_PG_BIN");

    private final Map<String, String> env;
    private final Properties file;
    /** Where the file was read from, for the warnings; null: no file. */
    private final Path filePath;

    /** From {@code env} (variables by name) and {@code file} (the properties file's keys and values). */
    public Defaults(Map<String, String> env, Properties file) {
        this(env, file, null);
    }

    private Defaults(Map<String, String> env, Properties file, Path filePath) {
        this.env = env;
        this.file = file;
        this.filePath = filePath;
    }

    /**
     * From this process's environment and its properties file.
     *
     * @throws IllegalArgumentException naming the properties file, when it is given (GMA_CONFIG) or exists but
     *     cannot be read
     */
    public static Defaults fromEnvironment() {
        Map<String, String> env = System.getenv();
        Properties p = new Properties();
        String configured = env.get("GMA_CONFIG");
        Path path = configured != null ? Path.of(configured) : Path.of(System.getProperty("user.home"),
                ".gma.properties");
        boolean read = configured != null || Files.isRegularFile(path);
        if (read) {
            try (Reader in = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
                p.load(in);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the properties file " + path + " ("
                        + e.getClass().getSimpleName() + ")", e);
            }
        }
        return new Defaults(env, p, read ? path : null);
    }

    /**
     * The {@code GMA_*} variables and properties file keys that none of {@code commands} takes, each as a
     * sentence naming the nearest one they do: otherwise a misspelt setting would be ignored without a word.
     * Only a program that has every command ({@code gma}) can tell; a jar of one command checks nothing.
     */
    public List<String> unknown(Iterable<CommandLine> commands) {
        Set<String> keys = new TreeSet<>();
        Set<String> variables = new TreeSet<>(OTHER_VARIABLES);
        for (CommandLine c : commands) {
            String command = name(c.getCommandSpec());
            for (CommandLine.Model.OptionSpec o : c.getCommandSpec().options()) {
                String option = o.longestName().replaceFirst("^-+", "");
                keys.add(option);
                keys.add(command + "." + option);
                variables.add(envName(option));
                variables.add(envName(command + "-" + option));
            }
        }
        List<String> unknown = new ArrayList<>();
        for (String v : new TreeSet<>(env.keySet())) {
            if (v.startsWith("GMA_") && !variables.contains(v)) {
                unknown.add("the environment variable " + v + " is no setting of any command" + nearest(v, variables)
                        + "; ignored");
            }
        }
        for (String k : new TreeSet<>(file.stringPropertyNames())) {
            if (!keys.contains(k)) {
                unknown.add("the key " + k + " in " + (filePath == null ? "the properties file" : filePath)
                        + " is no setting of any command" + nearest(k, keys)
                        + "; ignored");
            }
        }
        return unknown;
    }

    /** " (did you mean X?)" for the known name nearest to {@code name}, when one is near enough. */
    private static String nearest(String name, Set<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(name, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, name.length() / 3) ? " (did you mean " + best + "?)"
                : " (gma COMMAND --help lists them)";
    }

    /** The Levenshtein distance: edits (insert, delete, replace a character) from {@code a} to {@code b}. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }

    @Override
    public String defaultValue(CommandLine.Model.ArgSpec arg) {
        if (!arg.isOption()) {
            return null;
        }
        String source = sourceOf(arg);
        if (source == null) {
            return null;
        }
        return source.startsWith("GMA_") ? env.get(source) : file.getProperty(source.substring(source.indexOf(' ')
                + 1));
    }

    /**
     * Where the value of {@code arg} comes from when its flag is not given: the variable's name ({@code
     * GMA_PING_COUNT}), or {@code "key ping.count"} for the properties file; null when from neither. A value that
     * does not convert is named by it (the flag was not typed: a sentence about "--count" alone would mislead).
     */
    String sourceOf(CommandLine.Model.ArgSpec arg) {
        if (!arg.isOption()) {
            return null;
        }
        String option = ((CommandLine.Model.OptionSpec) arg).longestName().replaceFirst("^-+", "");
        String command = name(arg.command());
        for (String variable : new String[] {envName(command + "-" + option), envName(option)}) {
            if (env.get(variable) != null) {
                return variable;
            }
        }
        for (String key : new String[] {command + "." + option, option}) {
            if (file.getProperty(key) != null) {
                return "key " + key;
            }
        }
        return null;
    }

    /** The command's own name: its annotation's, not the name a program of its own shows it under. */
    private static String name(CommandLine.Model.CommandSpec command) {
        Object o = command.userObject();
        CommandLine.Command annotated = o == null ? null : o.getClass().getAnnotation(CommandLine.Command.class);
        return annotated != null && !annotated.name().equals(CommandLine.Model.CommandSpec.DEFAULT_COMMAND_NAME)
                ? annotated.name() : command.name();
    }

    private static String envName(String name) {
        return "GMA_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }
}
