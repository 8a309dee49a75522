package io.gma.archiver;

import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/**
 * A row's values to and from JDBC, by the column's type: INTEGER and TIMESTAMP as BIGINT, DOUBLE as DOUBLE (NaN and
 * the infinities as they are), STRING as VARCHAR, BOOLEAN as BOOLEAN; NULL as NULL.
 */
final class JdbcRows {
    private JdbcRows() {
    }

    /** Sets the parameters from {@code first} on to the values of {@code row}, in the schema's column order. */
    static void bind(PreparedStatement ps, int first, TableSchema schema, Row row) throws SQLException {
        for (int i = 0; i < schema.columns().size(); i++) {
            int at = first + i;
            boolean isNull = row.isNull(i);
            switch (schema.columns().get(i).type()) {
                case INTEGER:
                case TIMESTAMP:
                    if (isNull) {
                        ps.setNull(at, Types.BIGINT);
                    } else {
                        ps.setLong(at, row.getLong(i));
                    }
                    break;
                case DOUBLE:
                    if (isNull) {
                        ps.setNull(at, Types.DOUBLE);
                    } else {
                        ps.setDouble(at, row.getDouble(i));
                    }
                    break;
                case BOOLEAN:
                    if (isNull) {
                        ps.setNull(at, Types.BOOLEAN);
                    } else {
                        ps.setBoolean(at, row.getBoolean(i));
                    }
                    break;
                default:
                    if (isNull) {
                        ps.setNull(at, Types.VARCHAR);
                    } else {
                        ps.setString(at, row.getString(i));
                    }
            }
        }
    }

    /** The row of the schema's columns held by the result's columns from {@code first} on. */
    static Row read(ResultSet rs, int first, TableSchema schema) throws SQLException {
        Row.Builder b = Row.builder(schema.columns().size());
        for (int i = 0; i < schema.columns().size(); i++) {
            int at = first + i;
            switch (schema.columns().get(i).type()) {
                case INTEGER:
                case TIMESTAMP:
                    long l = rs.getLong(at);
                    if (rs.wasNull()) {
                        b.setNull(i);
                    } else {
                        b.setLong(i, l);
                    }
                    break;
                case DOUBLE:
                    double d = rs.getDouble(at);
                    if (rs.wasNull()) {
                        b.setNull(i);
                    } else {
                        b.setDouble(i, d);
                    }
                    break;
                case BOOLEAN:
                    boolean z = rs.getBoolean(at);
                    if (rs.wasNull()) {
                        b.setNull(i);
                    } else {
                        b.setBoolean(i, z);
                    }
                    break;
                default:
                    String s = rs.getString(at);
                    if (s == null) {
                        b.setNull(i);
                    } else {
                        b.setString(i, s);
                    }
            }
        }
        return b.build();
    }
}
