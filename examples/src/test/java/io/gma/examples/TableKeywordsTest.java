package io.gma.examples;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.tables.ColumnType;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import java.lang.reflect.Field;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The tables module (Names.RESERVED) and the registry (TableRequests.KEYWORDS) keep the words a table or column
 * may not be named: a schema TableSchema accepts must be one the registry takes. They once differed ("interval",
 * "set", "table", "values" passed the one and were refused by the other), so each of the registry's words is
 * tried here against TableSchema, and a schema of ordinary names is declared.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TableKeywordsTest {
    @Test
    void everyWordTheRegistryRefusesTheTablesModuleRefusesToo() throws Exception {
        Field f = Class.forName("io.gma.registry.TableRequests").getDeclaredField("KEYWORDS");
        f.setAccessible(true);
        @SuppressWarnings("unchecked")
        Set<String> registryWords = (Set<String>) f.get(null);
        assertTrue(registryWords.contains("interval"), "the registry's list: " + registryWords);
        for (String word : registryWords) {
            assertThrows(TableException.class, () -> TableSchema.builder("probe").column("host", ColumnType.STRING)
                    .column(word, ColumnType.INTEGER).primaryKey("host").build(), word);
            assertThrows(TableException.class, () -> TableSchema.builder(word).column("host", ColumnType.STRING)
                    .primaryKey("host").build(), word);
        }
    }

    @Test
    void aSchemaTheTablesModuleAcceptsIsDeclaredAtTheRegistry() throws Exception {
        TableSchema schema = TableSchema.builder("probe").column("host", ColumnType.STRING)
                .column("every_interval", ColumnType.INTEGER).primaryKey("host").build();
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer p = Producer.builder().registry(registry.url()).domain("lan").label("p").build()) {
            assertDoesNotThrow(() -> p.declare(schema));
        }
    }
}
