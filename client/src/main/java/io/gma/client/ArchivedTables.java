package io.gma.client;

import io.gma.registry.api.Publication;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tables a producer archives ({@link Producer#archive}; docs/tables.md, "The archiver"): each published at the
 * registry as an archive, with the archive's retention periods, and each TABLE_HISTORY for it handed to its
 * {@link TableArchive}, whose answer goes back when it completes, on the archive's thread.
 */
final class ArchivedTables {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final String name;
    private final RegistryClient registry;
    private final TableAnswers answers;
    private final Map<String, Archived> archives = new ConcurrentHashMap<>();

    /** A table archived here: its schema (with the archive's retention periods) and what answers for it. */
    private record Archived(TableSchema schema, TableArchive archive) {
    }

    ArchivedTables(String name, RegistryClient registry, TableAnswers answers) {
        this.name = name;
        this.registry = registry;
        this.answers = answers;
    }

    boolean contains(String table) {
        return archives.containsKey(table);
    }

    /** Publishes {@code schema}'s table as archived here; from then on its TABLE_HISTORY go to {@code archive}. */
    void archive(TableSchema schema, TableArchive archive) throws EndpointException {
        publish(schema);
        archives.put(schema.name(), new Archived(schema, archive));
    }

    /** Publishes each again: the registry forgets a producer's publications with its lease. */
    void republish() throws EndpointException {
        for (Archived a : archives.values()) {
            publish(a.schema());
        }
    }

    private void publish(TableSchema s) throws EndpointException {
        try {
            registry.publish(name, new Publication(s.name(), s.predicate().orElse(null), s.latestRetention(),
                    s.historyRetention(), true));
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("publishing the archive of table " + s.name(), ex);
        }
    }

    /** A TABLE_HISTORY for an archived table, on a link's event loop: asks the archive, answers when it has. */
    void answer(Message m, HistoryWire.Ask ask, TableQuery query, int maxRows) {
        Archived archived = archives.get(query.table());
        TableArchive.Request request = new TableArchive.Request(query.bind(archived.schema()), ask.sinceMicros(),
                ask.latest(), maxRows, m.from());
        CompletionStage<TableHistory> answer;
        try {
            answer = archived.archive().answer(request);
        } catch (RuntimeException ex) {
            answer = CompletableFuture.failedFuture(ex);
        }
        answer.whenComplete((h, ex) -> {
            if (ex == null) {
                answers.history(m, archived.schema(), ask, maxRows, h);
                return;
            }
            Throwable why = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
            if (why instanceof TableException) {
                answers.error(m, ErrorCode.MALFORMED, why.getMessage());
            } else if (why instanceof EndpointException e) {
                answers.error(m, e.code(), e.getMessage());
            } else {
                LOG.warn("{}: the archive of {} failed to answer {}: {}", name, query.table(), m.from(),
                        why.toString());
                answers.error(m, ErrorCode.INTERNAL, "the archive of " + query.table() + " at " + name + " failed: "
                        + why);
            }
        });
    }
}
