package io.gma.examples.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.cli.RegistryOption;
import io.gma.cli.ClientSecurityOptions;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma query "<SQL>"}. */
@Command(name = "query", mixinStandardHelpOptions = true, header = "Runs an SQL query on the registry.",
        description = "Runs one SELECT on the registry (its views: endpoints, producers, consumers, attributes,"
                + " domains) and prints the rows as an aligned table, or as JSON.")
final class QueryCommand implements Callable<Integer> {
    @Parameters(paramLabel = "SQL", description = "The query, such as \"SELECT name, domain FROM producers\".")
    String sql;

    @Mixin
    RegistryOption registry;

    @Mixin
    ClientSecurityOptions security;

    @Option(names = "--json", description = "Print {\"columns\": [...], \"rows\": [[...]]}.")
    boolean json;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        QueryResult r = client(spec, registry, security.security(spec)).query(sql);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode root = mapper.createObjectNode();
            ArrayNode columns = root.putArray("columns");
            r.columns().forEach(columns::add);
            ArrayNode rows = root.putArray("rows");
            for (List<Object> row : r.rows()) {
                rows.add(mapper.valueToTree(row));
            }
            out.println(mapper.writeValueAsString(root));
        } else {
            out.print(table(r));
        }
        return 0;
    }

    /** A client of the registry the options name (a usage error for a URL that is not right). */
    static RegistryClient client(CommandLine.Model.CommandSpec spec, RegistryOption registry, Security security) {
        registry.requireSecure(spec, security);
        try {
            return RegistryClient.builder(registry.url()).security(security).build();
        } catch (IllegalArgumentException bad) {
            throw new CommandLine.ParameterException(spec.commandLine(), bad.getMessage());
        }
    }

    /** The columns and rows aligned, a rule under the header, and a count (or "truncated") after. */
    static String table(QueryResult r) {
        List<String[]> lines = new ArrayList<>();
        lines.add(r.columns().toArray(new String[0]));
        for (List<Object> row : r.rows()) {
            lines.add(row.stream().map(v -> v == null ? "" : String.valueOf(v)).toArray(String[]::new));
        }
        StringBuilder b = RowPrinter.aligned(lines, new boolean[r.columns().size()]);
        b.append(r.rows().size()).append(r.rows().size() == 1 ? " row" : " rows")
                .append(r.truncated() ? " (truncated)" : "").append('\n');
        return b.toString();
    }
}
