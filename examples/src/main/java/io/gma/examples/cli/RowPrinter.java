package io.gma.examples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.client.TableRow;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * How {@code gma select} shows rows of a monitoring table: as an aligned table (a latest query), a line each (a
 * continuous one), or JSON lines. Each row is shown with its columns as the query selected them, then the producer
 * that inserted it and when.
 *
 * <p>For people, the table and the lines round a DOUBLE to 6 significant digits and show the insert time as the
 * local time of day with milliseconds, as {@code gma tail} does; a TIMESTAMP is an ISO-8601 instant in UTC. JSON
 * keeps every value exactly: numbers as numbers (a NaN or an infinity as a string, Jackson's default), TIMESTAMPs
 * as ISO-8601 instants to the microsecond, NULL as null.
 */
final class RowPrinter {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Always with its milliseconds: LocalTime's own text leaves out a fraction of zero. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final MathContext SHOWN = new MathContext(6);

    private RowPrinter() {
    }

    /**
     * The rows under a header, a rule under it, numbers (and their headers) right-aligned, NULL as nothing,
     * sorted by their values in the order selected, then by producer; then a count.
     */
    static String table(List<Column> columns, List<TableRow> rows) {
        return inOrder(columns, sorted(rows));
    }

    /** As {@link #table}, the rows in the order given (a history's, oldest first). */
    static String inOrder(List<Column> columns, List<TableRow> rows) {
        List<String[]> lines = new ArrayList<>();
        String[] head = new String[columns.size() + 2];
        for (int i = 0; i < columns.size(); i++) {
            head[i] = columns.get(i).name();
        }
        head[columns.size()] = "producer";
        head[columns.size() + 1] = "inserted";
        lines.add(head);
        for (TableRow r : rows) {
            String[] line = new String[head.length];
            for (int i = 0; i < columns.size(); i++) {
                line[i] = r.row().isNull(i) ? "" : text(columns.get(i).type(), r.row().get(i));
            }
            line[columns.size()] = r.archived() ? r.producer() + " via " + r.archiver() : r.producer();
            line[columns.size() + 1] = time(r.insertMicros());
            lines.add(line);
        }
        boolean[] right = new boolean[head.length];
        for (int i = 0; i < columns.size(); i++) {
            right[i] = numeric(columns.get(i).type());
        }
        return aligned(lines, right).append(rows.size()).append(rows.size() == 1 ? " row\n" : " rows\n").toString();
    }

    /**
     * Lines in columns two spaces apart, {@code right} ones right-aligned, the last column unpadded, and a rule
     * under the first line (the header).
     */
    static StringBuilder aligned(List<String[]> lines, boolean[] right) {
        int[] width = new int[right.length];
        for (String[] line : lines) {
            for (int i = 0; i < line.length; i++) {
                width[i] = Math.max(width[i], line[i].length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (int n = 0; n < lines.size(); n++) {
            String[] line = lines.get(n);
            for (int i = 0; i < line.length; i++) {
                String fill = " ".repeat(width[i] - line[i].length());
                String after = i < line.length - 1 ? (right[i] ? "" : fill) + "  " : "";
                b.append(right[i] ? fill + line[i] : line[i]).append(after);
            }
            b.append('\n');
            if (n == 0) {
                for (int i = 0; i < width.length; i++) {
                    b.append("-".repeat(width[i])).append(i < width.length - 1 ? "  " : "");
                }
                b.append('\n');
            }
        }
        return b;
    }

    /** A row as it arrives: {@code 12:00:00.123 cpu@lan: host=node-1 cpu=3 busy=12.5}, strings quoted when needed. */
    static String line(List<Column> columns, TableRow r) {
        StringBuilder b = new StringBuilder(time(r.insertMicros())).append(' ').append(r.producer()).append(':');
        for (int i = 0; i < columns.size(); i++) {
            Column c = columns.get(i);
            b.append(' ').append(c.name()).append('=');
            if (r.row().isNull(i)) {
                b.append("NULL");
            } else if (c.type() == ColumnType.STRING) {
                b.append(quoted(r.row().getString(i)));
            } else {
                b.append(text(c.type(), r.row().get(i)));
            }
        }
        return b.append('\n').toString();
    }

    /**
     * A row as one line of JSON: {@code {"producer":"cpu@lan","inserted":"2026-11-26T12:00:00.123456Z",
     * "row":{"host":"node-1","busy":12.5}}}.
     */
    static String json(List<Column> columns, TableRow r) throws JsonProcessingException {
        ObjectNode line = MAPPER.createObjectNode().put("producer", r.producer());
        if (r.archived()) {
            line.put("archiver", r.archiver());
        }
        line.put("inserted", instant(r.insertMicros()));
        ObjectNode values = line.putObject("row");
        for (int i = 0; i < columns.size(); i++) {
            String name = columns.get(i).name();
            Row row = r.row();
            if (row.isNull(i)) {
                values.putNull(name);
                continue;
            }
            switch (columns.get(i).type()) {
                case INTEGER -> values.put(name, row.getLong(i));
                case DOUBLE -> values.put(name, row.getDouble(i));
                case BOOLEAN -> values.put(name, row.getBoolean(i));
                case TIMESTAMP -> values.put(name, instant(row.getLong(i)));
                default -> values.put(name, row.getString(i));
            }
        }
        return MAPPER.writeValueAsString(line) + "\n";
    }

    /** A value as the table shows it. */
    static String text(ColumnType type, Object value) {
        return switch (type) {
            case DOUBLE -> {
                double d = (Double) value;
                yield Double.isFinite(d) ? new BigDecimal(d).round(SHOWN).stripTrailingZeros().toPlainString()
                        : Double.toString(d);
            }
            case TIMESTAMP -> instant((Long) value);
            default -> String.valueOf(value);
        };
    }

    /** Microseconds since the epoch as an ISO-8601 instant, {@code 2026-11-26T12:00:00.123456Z}. */
    static String instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS).toString();
    }

    private static String time(long micros) {
        return TIME.format(LocalTime.ofInstant(Instant.EPOCH.plus(micros, ChronoUnit.MICROS), ZoneId.systemDefault()));
    }

    private static boolean numeric(ColumnType type) {
        return type == ColumnType.INTEGER || type == ColumnType.DOUBLE;
    }

    /** The string as it is, or in double quotes (a quote or backslash escaped) when it would not read back. */
    private static String quoted(String s) {
        if (!s.isEmpty() && !s.equals("NULL") && s.chars().noneMatch(c -> c <= ' ' || c == '"' || c == '='
                || c == '\\')) {
            return s;
        }
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + '"';
    }

    /** By each value in turn (NULL first), then by producer. */
    static List<TableRow> sorted(List<TableRow> rows) {
        Comparator<TableRow> byValues = (a, b) -> {
            for (int i = 0; i < a.row().size(); i++) {
                int c = compare(a.row().isNull(i) ? null : a.row().get(i), b.row().isNull(i) ? null : b.row().get(i));
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        };
        List<TableRow> all = new ArrayList<>(rows);
        all.sort(byValues.thenComparing(TableRow::producer));
        return all;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compare(Object a, Object b) {
        if (a == null || b == null) {
            return a == null ? (b == null ? 0 : -1) : 1;
        }
        return ((Comparable) a).compareTo(b); // one column holds one type: Long, Double, String or Boolean
    }
}
