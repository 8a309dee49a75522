package io.gma.registry;

import io.gma.registry.api.QueryResult;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * Runs a statement the {@link SqlGuard} passed, on a read-only connection, with the row cap, the statement
 * timeout and a budget on the answer's size. Fetches one row past the cap to tell a full answer from a cut
 * one. Rows are read as they come (PostgreSQL streams them in batches), so the budget stops a wide answer
 * before it is all in memory.
 */
final class QueryRunner {
    /** SQLSTATE for a statement cancelled by its timeout (H2 and PostgreSQL both use it). */
    private static final String CANCELLED = "57014";

    /** The most characters an answer may hold (about 32 MiB of text): 10,000 rows of 1.6 KB each. */
    static final long MAX_ANSWER_CHARS = 16L << 20;
    private static final int MAX_ERROR_CHARS = 200;

    private final DataSource reader;
    private final int maxRows;
    private final int timeoutSeconds;
    /** Times each statement run, whatever comes of it. */
    private final Metrics metrics;

    QueryRunner(DataSource reader, int maxRows, int timeoutSeconds, Metrics metrics) {
        this.reader = reader;
        this.maxRows = maxRows;
        this.timeoutSeconds = timeoutSeconds;
        this.metrics = metrics;
    }

    /**
     * @param sql a statement the guard approved ({@link SqlGuard.Approved#sql()}), never a caller's own text
     * @throws SQLException only when no connection could be had (the caller answers 503)
     */
    QueryResult run(String sql) throws SQLException {
        Connection c = reader.getConnection();
        try (c; Statement s = c.createStatement()) {
            s.setMaxRows(maxRows + 1);
            s.setQueryTimeout(timeoutSeconds);
            s.setFetchSize(Math.min(maxRows + 1, 1000));
            long start = System.nanoTime();
            try (ResultSet rs = s.executeQuery(sql)) {
                ResultSetMetaData meta = rs.getMetaData();
                int n = meta.getColumnCount();
                List<String> columns = new ArrayList<>(n);
                int[] types = new int[n];
                for (int i = 1; i <= n; i++) {
                    columns.add(label(meta.getColumnLabel(i)));
                    types[i - 1] = meta.getColumnType(i);
                }
                List<List<Object>> rows = new ArrayList<>();
                boolean truncated = false;
                long chars = 0;
                while (rs.next()) {
                    if (rows.size() == maxRows) {
                        truncated = true;
                        break;
                    }
                    Object[] row = new Object[n];
                    for (int i = 1; i <= n; i++) {
                        row[i - 1] = value(rs, i, types[i - 1]);
                        chars += row[i - 1] == null ? 4 : row[i - 1].toString().length();
                    }
                    if (chars > MAX_ANSWER_CHARS) {
                        throw new ApiException(400, "TOO_LARGE", "the answer passed " + MAX_ANSWER_CHARS
                                + " characters at row " + (rows.size() + 1) + "; select fewer columns or rows");
                    }
                    rows.add(Arrays.asList(row));
                }
                return new QueryResult(columns, rows, truncated);
            } finally {
                metrics.queryTook(System.nanoTime() - start); // rows, a refusal or a timeout: it ran
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
            }
        } catch (SQLTimeoutException e) {
            throw timeout();
        } catch (SQLException e) {
            if (CANCELLED.equals(e.getSQLState())) {
                throw timeout();
            }
            String reason = firstLine(e);
            throw new ApiException(400, "QUERY_FAILED", "the database refused the query: "
                    + (reason.length() > MAX_ERROR_CHARS ? reason.substring(0, MAX_ERROR_CHARS) + "..." : reason));
        }
    }

    private ApiException timeout() {
        return new ApiException(400, "TIMEOUT", "the query ran longer than the statement timeout of "
                + timeoutSeconds + " s; narrow it with WHERE or LIMIT");
    }

    /** H2 reports unquoted identifiers in upper case; answer them in lower case, as PostgreSQL does. */
    private static String label(String label) {
        return label.equals(label.toUpperCase(Locale.ROOT)) ? label.toLowerCase(Locale.ROOT) : label;
    }

    private static Object value(ResultSet rs, int i, int type) throws SQLException {
        switch (type) {
            case Types.TIMESTAMP_WITH_TIMEZONE:
            case Types.TIMESTAMP:
                OffsetDateTime time = rs.getObject(i, OffsetDateTime.class);
                return time == null ? null : time.toInstant().toString();
            case Types.TINYINT:
            case Types.SMALLINT:
            case Types.INTEGER:
            case Types.BIGINT:
                long whole = rs.getLong(i);
                return rs.wasNull() ? null : whole;
            case Types.REAL:
            case Types.FLOAT:
            case Types.DOUBLE:
                double d = rs.getDouble(i);
                // JSON has no NaN or infinity: those go as strings
                return rs.wasNull() ? null : Double.isFinite(d) ? (Object) d : Double.toString(d);
            case Types.NUMERIC:
            case Types.DECIMAL:
                return rs.getBigDecimal(i);
            case Types.BOOLEAN:
            case Types.BIT:
                boolean b = rs.getBoolean(i);
                return rs.wasNull() ? null : b;
            default:
                return rs.getString(i);
        }
    }

    /** The database's own first line, which names the problem without a stack of internals. */
    private static String firstLine(SQLException e) {
        String message = e.getMessage() == null ? e.getSQLState() : e.getMessage();
        return message.lines().findFirst().orElse(message);
    }
}
