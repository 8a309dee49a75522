package io.gma.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * An age or a period as the commands take it ({@code gma pc --max-age}, {@code gma archive --retention}): seconds,
 * or a number with s, m, h or d after it (90s, 15m, 24h, 7d); never negative.
 */
public final class AgeConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern AGE = Pattern.compile("(\\d{1,9})([smhd]?)");

    @Override
    public Duration convert(String value) {
        Matcher m = AGE.matcher(value.trim());
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("\"" + value + "\" is not an age: seconds, or a"
                    + " number with s, m, h or d after it (90s, 15m, 24h, 7d)");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            default -> Duration.ofSeconds(n);
        };
    }
}
