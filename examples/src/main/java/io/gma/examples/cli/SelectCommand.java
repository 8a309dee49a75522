package io.gma.examples.cli;

import io.gma.cli.AgeConverter;
import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.EndpointException;
import io.gma.client.TableRow;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma select "<SQL>"}. */
@Command(name = "select", mixinStandardHelpOptions = true, header = "Runs an SQL query over monitoring tables.",
        description = "A consumer that asks the producers of a monitoring table (docs/tables.md) for its rows:"
                + " SELECT * | column, ... FROM table [WHERE ...]. By default a latest query: the newest row of each"
                + " key that matches, from every producer whose share may hold some, printed as an aligned table"
                + " with the producer and insert time of each (or JSON lines). With --continuous, each new row that"
                + " matches, a line each as it arrives, from producers that start later too, until Ctrl-C (or"
                + " --duration). With --history 1h, every row inserted in the last hour, oldest first, from the"
                + " table's archivers or the producers that keep history. A query the parser refuses is a usage"
                + " error (exit 2); a table that is not declared, a column it does not have, or a producer that"
                + " refuses the query is a failure (exit 1).")
final class SelectCommand implements Callable<Integer> {
    /** Rows received and not yet printed, at most; past it they are counted and dropped (a slow terminal). */
    static final int MAX_WAITING = 10_000;

    @Parameters(paramLabel = "SQL", description = "The query, such as \"SELECT host, cpu, busy FROM host_cpu WHERE"
            + " busy > 50\".")
    String sql;

    @Mixin
    EndpointOptions endpoint;

    @Option(names = "--json", description = "One JSON object a row: {\"producer\", \"inserted\", \"row\": {column:"
            + " value, ...}}.")
    boolean json;

    @Option(names = "--continuous", description = "Follow the rows inserted from now on, instead of the latest.")
    boolean continuous;

    @Option(names = "--history", paramLabel = "AGE", converter = AgeConverter.class, description = "Every row"
            + " inserted within AGE (90s, 15m, 1h, 7d), oldest first, from the table's archivers or the producers"
            + " that keep history, instead of the latest; the query may end in ORDER BY insert_time [DESC] and"
            + " LIMIT n.")
    Duration history;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, continuous || duration.seconds() == 0, "--duration " + duration.seconds() + " needs"
                + " --continuous: a latest query ends as soon as it has its rows");
        Cli.check(spec, duration.seconds() >= 0, "--duration " + duration.seconds() + " is negative");
        Cli.check(spec, history == null || !continuous, "--history and --continuous go apart: the one asks what was"
                + " kept, the other follows what comes");
        Cli.check(spec, history == null || !history.isZero(), "--history 0 asks for nothing; give an age such as 1h");
        TableQuery query;
        try {
            query = history != null ? TableQuery.parseHistory(sql) : TableQuery.parse(sql);
        } catch (TableException refused) {
            throw new CommandLine.ParameterException(spec.commandLine(), refused.getMessage());
        }
        Consumer consumer = endpoint.apply(Consumer.builder(), spec).label("select").build();
        if (continuous) {
            return follow(consumer, query);
        }
        try (consumer) {
            List<TableRow> rows = history != null ? consumer.history(sql, Instant.now().minus(history))
                    : RowPrinter.sorted(consumer.latest(sql));
            List<Column> columns = columns(consumer, query);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                for (TableRow r : rows) {
                    out.print(RowPrinter.json(columns, r));
                }
            } else {
                out.print(RowPrinter.inOrder(columns, rows));
            }
            out.flush();
        }
        return Cli.OK;
    }

    /** The continuous query: rows are queued on the links' event loops and printed here, as they come. */
    private int follow(Consumer consumer, TableQuery query) throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        BlockingQueue<TableRow> arrived = new ArrayBlockingQueue<>(MAX_WAITING);
        AtomicLong dropped = new AtomicLong();
        return Running.until(duration.seconds(), null, () -> {
            ContinuousQuery q;
            try {
                q = consumer.continuous(sql, row -> {
                    if (!arrived.offer(row)) { // the handler must not block its link: count, and go on
                        dropped.incrementAndGet();
                    }
                });
            } catch (EndpointException e) {
                if (Thread.interrupted()) { // Ctrl-C while the producers were answering: a clean stop all the same
                    return;
                }
                throw e;
            }
            List<Column> columns = columns(consumer, query);
            note(err, "select: following " + query.table() + " at " + q.producers().size() + " producer"
                    + (q.producers().size() == 1 ? "" : "s") + " (and those that start later)");
            long end = duration.seconds() > 0 ? System.nanoTime() + Duration.ofSeconds(duration.seconds()).toNanos()
                    : Long.MAX_VALUE;
            long told = 0;
            while (System.nanoTime() < end) {
                TableRow r = arrived.poll(Math.min(1_000_000_000L, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (r != null) {
                    out.print(json ? RowPrinter.json(columns, r) : RowPrinter.line(columns, r));
                    out.flush();
                }
                long lost = dropped.get();
                if (lost > told) {
                    note(err, "select: " + (lost - told) + " rows dropped: they came faster than they were printed");
                    told = lost;
                }
            }
        }, consumer);
    }

    /**
     * The columns the query selects, with their types, from the registry's {@code table_columns}.
     *
     * @throws EndpointException NO_ROUTE when the table is no longer declared (it was a moment ago)
     */
    static List<Column> columns(Consumer consumer, TableQuery query) throws EndpointException {
        // the name is an identifier (TableQuery checked it): nothing to quote
        List<List<Object>> rows = consumer.query("SELECT name, type, key_position FROM table_columns WHERE"
                + " table_name = '" + query.table() + "' ORDER BY position").rows();
        if (rows.isEmpty()) {
            throw new EndpointException(ErrorCode.NO_ROUTE, "table " + query.table() + " is not declared at the"
                    + " registry (any more)");
        }
        List<Column> columns = new ArrayList<>();
        TreeMap<Integer, String> key = new TreeMap<>();
        for (List<Object> row : rows) {
            columns.add(new Column((String) row.get(0), ColumnType.valueOf((String) row.get(1))));
            if (row.get(2) != null) {
                key.put(((Number) row.get(2)).intValue(), (String) row.get(0));
            }
        }
        TableSchema schema = new TableSchema(query.table(), columns, new ArrayList<>(key.values()), null,
                TableSchema.DEFAULT_LATEST_RETENTION, Duration.ZERO);
        return query.bind(schema).resultColumns();
    }

    private static void note(PrintWriter err, String line) {
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }
}
