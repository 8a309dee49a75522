package io.gma.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
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

    private final Map<String, String> env;
    private final Properties file;

    /** From {@code env} (variables by name) and {@code file} (the properties file's keys and values). */
    public Defaults(Map<String, String> env, Properties file) {
        this.env = env;
        this.file = file;
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
        if (configured != null || Files.isRegularFile(path)) {
            try (Reader in = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
                p.load(in);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the properties file " + path + " ("
                        + e.getClass().getSimpleName() + ")", e);
            }
        }
        return new Defaults(env, p);
    }

    @Override
    public String defaultValue(CommandLine.Model.ArgSpec arg) {
        if (!arg.isOption()) {
            return null;
        }
        String option = ((CommandLine.Model.OptionSpec) arg).longestName().replaceFirst("^-+", "");
        String command = name(arg.command());
        String value = env.get(envName(command + "-" + option));
        if (value == null) {
            value = env.get(envName(option));
        }
        if (value == null) {
            value = file.getProperty(command + "." + option);
        }
        if (value == null) {
            value = file.getProperty(option);
        }
        return value;
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
