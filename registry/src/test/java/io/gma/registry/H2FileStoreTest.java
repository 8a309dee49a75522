package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Publication;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.TableDeclaration;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2FileStoreTest extends StoreContract {
    @TempDir
    static Path dir;

    @Override
    String[] jdbc() {
        // AUTO_SERVER lets the second registry of twoRegistriesOnOneDatabase open the same file
        return new String[] {"jdbc:h2:file:" + dir.resolve("gma") + ";AUTO_SERVER=TRUE", "sa", ""};
    }

    @Test
    void endpointSurvivesARestart() throws Exception {
        Lease lease = client.register(producer("durable").attribute("site", "cardiff")
                .lease(Duration.ofMinutes(5)).build());
        registry.close();
        registry = newRegistry().build().start();
        client = RegistryClient.create(registry.url());
        EndpointInfo back = client.lookup(lease.name());
        assertEquals(Map.of("site", "cardiff"), back.attributes());
        assertEquals(lease.expiresAt(), back.expiresAt());
        client.renew(lease.name());
    }

    @Test
    void aDatabaseFromBeforeArchiversGetsTheArchiveColumn() throws Exception {
        registry.close();
        // the publishers table and view as they were before issue 24
        String[] url = jdbc();
        try (Connection c = DriverManager.getConnection(url[0] + ";NON_KEYWORDS=KEY,VALUE", url[1], url[2]);
                Statement s = c.createStatement()) {
            s.execute("DROP VIEW publishers");
            s.execute("ALTER TABLE gma_publishers DROP COLUMN archive");
            s.execute("CREATE VIEW publishers AS SELECT table_name, name, domain, predicate, latest_retention_s,"
                    + " history_retention_s, published_at FROM gma_publishers WHERE expires_at > CURRENT_TIMESTAMP");
        }
        registry = newRegistry().build().start();
        client = RegistryClient.create(registry.url());
        client.declareTable(new TableDeclaration("old_db", List.of(new ColumnDeclaration("host", ColumnType.STRING)),
                List.of("host")));
        Lease archiver = client.register(producer("archiver").build());
        client.publish(archiver.name(), new Publication("old_db", null, Duration.ofSeconds(60), Duration.ofDays(1),
                true));
        assertEquals(List.of(List.of(true)), client.query("SELECT archive FROM publishers WHERE table_name ="
                + " 'old_db'").rows());
    }
}
