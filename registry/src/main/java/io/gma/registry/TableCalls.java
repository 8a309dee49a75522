package io.gma.registry;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.TableDeclaration;
import io.gma.registry.api.TableInfo;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The table calls of the registry's API, which {@link RegistryServlet} routes here (docs/registry.md, "Tables"):
 *
 * <pre>
 *   POST /tables                          declare a table       rule: table identity name
 *   GET  /tables/{table}                  look a table up       rules: query identity tables and table_columns
 *   PUT  /endpoints/{name}/tables/{table} publish a table       rule: register identity label@domain, and the owner
 * </pre>
 */
final class TableCalls {
    private final RegistryCore core;

    TableCalls(RegistryCore core) {
        this.core = core;
    }

    /** {@code POST /tables}: 201 when stored now, 200 when the registry held the same declaration. */
    void declare(HttpServletRequest req, HttpServletResponse resp, String identity) throws IOException, SQLException {
        RegistryServlet.requireJson(req);
        TableDeclaration t = TableRequests.declaration(RegistryServlet.body(req, Settings.MAX_JSON_BYTES));
        authorize(identity, Authorizer.Action.DECLARE_TABLE, t.name());
        boolean created = core.tables.declare(t, identity);
        TableInfo held = core.tables.table(t.name());
        if (created) {
            resp.setHeader("Location", req.getContextPath() + req.getServletPath() + "/tables/" + t.name());
        }
        RegistryServlet.json(resp, created ? 201 : 200, Json.MAPPER.createObjectNode().put("name", t.name())
                .put("created", created).put("declaredAt", held.declaredAt().toString()));
    }

    /** {@code GET /tables/{table}}: what the views {@code tables} and {@code table_columns} show of it. */
    void lookup(String table, HttpServletResponse resp, String identity) throws IOException, SQLException {
        authorize(identity, Authorizer.Action.QUERY, "tables");
        authorize(identity, Authorizer.Action.QUERY, "table_columns");
        TableInfo t = core.tables.table(TableRequests.identifier("table", table));
        List<Map<String, String>> columns = new ArrayList<>();
        for (ColumnDeclaration c : t.declaration().columns()) {
            Map<String, String> column = new LinkedHashMap<>();
            column.put("name", c.name());
            column.put("type", c.type().name());
            columns.add(column);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", t.declaration().name());
        out.put("columns", columns);
        out.put("primaryKey", t.declaration().primaryKey());
        out.put("declaredBy", t.declaredBy());
        out.put("declaredAt", t.declaredAt().toString());
        RegistryServlet.json(resp, 200, out);
    }

    /**
     * {@code PUT /endpoints/{name}/tables/{table}}: 201 when the producer did not publish the table before, 200
     * when this replaces what it said. Checked as a renewal is: the register rule for the label and domain stored
     * with the name, then (in the store) that the caller's identity registered it.
     */
    void publish(HttpServletRequest req, HttpServletResponse resp, String producer, String table, String identity)
            throws IOException, SQLException {
        RegistryServlet.requireJson(req);
        String name = Names.name(producer);
        String checkedTable = TableRequests.identifier("table", table);
        TableRequests.NewPublication p = TableRequests.publication(RegistryServlet.body(req,
                Settings.MAX_JSON_BYTES));
        if (core.authorizes) {
            authorize(identity, Authorizer.Action.REGISTER, core.store.registeredAs(name));
        }
        boolean created = core.tables.publish(name, checkedTable, p, identity);
        RegistryServlet.json(resp, created ? 201 : 200, Json.MAPPER.createObjectNode().put("name", name)
                .put("table", checkedTable).put("created", created));
    }

    private void authorize(String identity, Authorizer.Action action, String target) {
        try {
            core.authorizer.authorize(identity, action, target);
        } catch (AccessDeniedException e) {
            throw ApiException.forbidden(e.getMessage());
        }
    }
}
