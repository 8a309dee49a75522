package io.gma.archiver;

import io.gma.client.EndpointException;
import io.gma.client.TableArchive;
import io.gma.client.TableHistory;
import io.gma.wire.ErrorCode;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

/**
 * Answers the history and latest queries of one archived table from the database, on the archiver's reader
 * threads (never on a link's event loop). A database that cannot answer gives ERROR INTERNAL with its sentence, and
 * readers all busy with a full queue ERROR QUEUE_FULL: either way the consumer asks another archiver.
 */
final class ArchiveReader implements TableArchive {
    private final ArchiveDatabase db;
    private final ArchiveTable table;
    private final ExecutorService readers;

    ArchiveReader(ArchiveDatabase db, ArchiveTable table, ExecutorService readers) {
        this.db = db;
        this.table = table;
        this.readers = readers;
    }

    @Override
    public CompletionStage<TableHistory> answer(Request request) {
        try {
            return CompletableFuture.supplyAsync(() -> read(request), readers);
        } catch (RejectedExecutionException busy) {
            return CompletableFuture.failedFuture(new EndpointException(ErrorCode.QUEUE_FULL, "the archive of "
                    + table.name() + " has " + Archiver.READ_QUEUE + " queries waiting for its " + Archiver.READERS
                    + " readers; ask another archiver, or later"));
        }
    }

    private TableHistory read(Request request) {
        long now = Micros.now();
        try (Connection c = db.connection()) {
            return new TableHistory(table.read(c, request), table.completeSince(now));
        } catch (SQLException ex) {
            throw new CompletionException(new EndpointException(ErrorCode.INTERNAL, "the archive of " + table.name()
                    + " cannot read its database " + db.shown() + ": " + ex.getMessage(), ex));
        }
    }
}
