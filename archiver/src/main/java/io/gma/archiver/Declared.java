package io.gma.archiver;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.registry.api.QueryResult;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.TableSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/** A table as the registry declares it (its {@code table_columns} view), asked through a consumer. */
final class Declared {
    /** A table's name, as the registry takes them: nothing to quote in a query. */
    static final Pattern TABLE = Pattern.compile("[a-z][a-z0-9_]{0,63}");

    private Declared() {
    }

    /**
     * The table's columns and key, with the default latest retention and {@code historyRetention}.
     *
     * @param table a name that matches {@link #TABLE}
     * @return null when the registry declares no such table
     * @throws EndpointException the registry did not answer
     */
    static TableSchema schema(Consumer consumer, String table, Duration historyRetention) throws EndpointException {
        if (!TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("table \"" + table + "\" is not a table's name");
        }
        QueryResult r = consumer.query("SELECT name, type, key_position FROM table_columns WHERE table_name = '"
                + table + "' ORDER BY position");
        if (r.rows().isEmpty()) {
            return null;
        }
        List<Column> columns = new ArrayList<>();
        Map<Integer, String> key = new TreeMap<>();
        for (List<Object> row : r.rows()) {
            String name = (String) row.get(0);
            columns.add(new Column(name, ColumnType.valueOf((String) row.get(1))));
            if (row.get(2) instanceof Number n) {
                key.put(n.intValue(), name);
            }
        }
        return new TableSchema(table, columns, List.copyOf(key.values()), null,
                TableSchema.DEFAULT_LATEST_RETENTION, historyRetention);
    }
}
