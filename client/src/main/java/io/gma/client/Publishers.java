package io.gma.client;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableInfo;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the mediator asks the registry: a table's schema ({@code GET /tables/{name}}), and who publishes it
 * ({@code publishers}): each producer with its predicate, its retention periods and whether it is an archiver.
 */
final class Publishers {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final String name;
    private final RegistryClient registry;
    /**
     * Per table, each predicate of its producers compiled as a schema (its overlap test): a predicate is parsed
     * once, not at every query; what the registry no longer lists is forgotten at the next look.
     */
    private final Map<String, Map<String, TableSchema>> predicates = new ConcurrentHashMap<>();

    /**
     * A producer of a table.
     *
     * @param predicate null: every row
     * @param archive whether it archives other producers' rows (answers history and latest, never continuous)
     */
    record Publisher(String name, String predicate, Duration latestRetention, Duration historyRetention,
            boolean archive) {
    }

    Publishers(String name, RegistryClient registry) {
        this.name = name;
        this.registry = registry;
    }

    /**
     * The producers of the query's table whose predicate may overlap its WHERE, archivers included.
     *
     * @throws EndpointException the registry failed (its code and sentence)
     */
    List<Publisher> of(TableQuery q, TableSchema schema) throws EndpointException {
        QueryResult r;
        try {
            // the name is an identifier (TableQuery checked it): nothing to quote
            r = registry.query("SELECT name, predicate, latest_retention_s, history_retention_s, archive FROM"
                    + " publishers WHERE table_name = '" + q.table() + "'");
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("finding the producers of " + q.table(), ex);
        }
        List<Publisher> found = new ArrayList<>();
        Map<String, TableSchema> before = predicates.getOrDefault(schema.name(), Map.of());
        Map<String, TableSchema> now = new HashMap<>();
        for (List<Object> row : r.rows()) {
            String producer = (String) row.get(0);
            String predicate = (String) row.get(1);
            if (predicate != null) {
                try {
                    TableSchema theirs = now.get(predicate);
                    if (theirs == null) {
                        theirs = before.get(predicate);
                        if (theirs == null || !theirs.columns().equals(schema.columns())
                                || !theirs.primaryKey().equals(schema.primaryKey())) {
                            theirs = new TableSchema(schema.name(), schema.columns(), schema.primaryKey(), predicate,
                                    TableSchema.DEFAULT_LATEST_RETENTION, Duration.ZERO);
                        }
                        now.put(predicate, theirs);
                    }
                    if (!q.mayOverlap(theirs)) {
                        continue;
                    }
                } catch (TableException ex) {
                    LOG.debug("{}: predicate of {} not understood, asked anyway: {}", name, producer,
                            ex.getMessage());
                }
            }
            found.add(new Publisher(producer, predicate, seconds(row.get(2)), seconds(row.get(3)),
                    Boolean.TRUE.equals(row.get(4))));
        }
        predicates.put(schema.name(), now); // the predicates of the producers there are now, no more
        return found;
    }

    private static Duration seconds(Object value) {
        return value instanceof Number n ? Duration.ofSeconds(n.longValue()) : Duration.ZERO;
    }

    /** The table as the registry declares it, without a predicate. */
    TableSchema schemaOf(String table) throws EndpointException {
        TableInfo info;
        try {
            info = registry.table(table);
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("table " + table, ex);
        }
        List<Column> columns = new ArrayList<>();
        for (ColumnDeclaration c : info.declaration().columns()) {
            columns.add(new Column(c.name(), ColumnType.valueOf(c.type().name())));
        }
        return new TableSchema(table, columns, info.declaration().primaryKey(), null,
                TableSchema.DEFAULT_LATEST_RETENTION, Duration.ZERO);
    }
}
