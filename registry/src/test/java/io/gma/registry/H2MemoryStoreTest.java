package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class H2MemoryStoreTest extends StoreContract {
    private final String url = "jdbc:h2:mem:store-" + UUID.randomUUID();

    @Override
    String[] jdbc() {
        return new String[] {url, "sa", ""};
    }

    @Test
    void sweeperDeletesExpiredRows() throws Exception {
        client.register(producer("swept").attribute("a", "b").lease(Duration.ofSeconds(1)).build());
        // the lease lapses after 1 s, and the sweeper runs every 200 ms
        await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> {
            try (Connection c = DriverManager.getConnection(url, "sa", "");
                    ResultSet rs = c.createStatement().executeQuery(
                            "SELECT (SELECT COUNT(*) FROM gma_endpoints), (SELECT COUNT(*) FROM gma_attributes)")) {
                rs.next();
                assertEquals(0, rs.getInt(1));
                assertEquals(0, rs.getInt(2));
            }
        });
    }
}
