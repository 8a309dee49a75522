package io.gma.tables;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAccessor;

/**
 * A literal of a query: its type, its value, and its text as written, for sentences. TIMESTAMP literals hold
 * microseconds since the epoch; {@code kind} is the literal's own type, which {@link Binder} checks against the
 * column's.
 */
record Literal(ColumnType kind, long longValue, double doubleValue, String stringValue, String text) {
    /** {@code 2024-05-01 12:00:00[.ffffff][Z|+hh:mm]}, 'T' or a space between date and time; UTC by default. */
    private static final DateTimeFormatter TIMESTAMP = new DateTimeFormatterBuilder()
            .append(DateTimeFormatter.ISO_LOCAL_DATE)
            .optionalStart()
            .appendPattern("['T'][' ']")
            .append(DateTimeFormatter.ISO_LOCAL_TIME)
            .optionalStart().appendOffset("+HH:MM", "Z").optionalEnd()
            .optionalEnd()
            .toFormatter();

    static Literal ofLong(long v, String text) {
        return new Literal(ColumnType.INTEGER, v, 0, null, text);
    }

    static Literal ofDouble(double v, String text) {
        return new Literal(ColumnType.DOUBLE, 0, v, null, text);
    }

    static Literal ofString(String v) {
        return new Literal(ColumnType.STRING, 0, 0, v, Sql.quote(v));
    }

    static Literal ofBoolean(boolean v) {
        return new Literal(ColumnType.BOOLEAN, v ? 1 : 0, 0, null, v ? "TRUE" : "FALSE");
    }

    /**
     * A TIMESTAMP literal's text in microseconds since the epoch.
     *
     * @throws TableException if the text is not such a date and time, or has digits finer than microseconds
     */
    static Literal ofTimestamp(String text) {
        String shown = "TIMESTAMP " + Sql.quote(text);
        try {
            TemporalAccessor t = TIMESTAMP.parse(text.trim());
            LocalDate date = LocalDate.from(t);
            LocalTime time = t.isSupported(ChronoField.HOUR_OF_DAY) ? LocalTime.from(t) : LocalTime.MIDNIGHT;
            if (time.getNano() % 1000 != 0) {
                throw new TableException(shown + " is finer than a microsecond");
            }
            ZoneOffset offset = t.isSupported(ChronoField.OFFSET_SECONDS) ? ZoneOffset.from(t) : ZoneOffset.UTC;
            OffsetDateTime at = OffsetDateTime.of(LocalDateTime.of(date, time), offset);
            long micros = ChronoUnit.MICROS.between(OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC), at);
            return new Literal(ColumnType.TIMESTAMP, micros, 0, null, shown);
        } catch (DateTimeParseException e) {
            throw new TableException(shown + " is not a date and time such as '2024-05-01 12:00:00',"
                    + " '2024-05-01T12:00:00.250Z' or '2024-05-01 14:00:00+02:00'");
        } catch (DateTimeException | ArithmeticException e) {
            throw new TableException(shown + " is out of range");
        }
    }

    /** The value boxed as a {@link Row} holds it. */
    Object value() {
        switch (kind) {
            case INTEGER:
            case TIMESTAMP:
                return longValue;
            case DOUBLE:
                return doubleValue;
            case BOOLEAN:
                return longValue != 0;
            default:
                return stringValue;
        }
    }

    @Override
    public String toString() {
        return text;
    }
}
