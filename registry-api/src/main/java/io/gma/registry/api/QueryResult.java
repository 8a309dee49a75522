package io.gma.registry.api;

import java.util.List;

/**
 * The answer to a query: column labels in lower case (as written, when quoted), and rows of JSON values
 * (strings, numbers, booleans, null; times as ISO-8601 strings).
 *
 * @param truncated whether the registry's row cap cut the answer short
 */
public record QueryResult(List<String> columns, List<List<Object>> rows, boolean truncated) {
    public QueryResult {
        columns = List.copyOf(columns);
        rows = List.copyOf(rows);
    }
}
