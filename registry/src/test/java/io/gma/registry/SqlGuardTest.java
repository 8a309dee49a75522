package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SqlGuardTest {
    private final ExecutorService parser = Executors.newFixedThreadPool(2);
    private final SqlGuard guard = new SqlGuard(16384, 2000, parser);

    @AfterEach
    void stop() {
        parser.shutdownNow();
    }

    @Test
    void remembersApprovalsOnly() {
        String ok = "SELECT p.name FROM producers p JOIN attributes a ON a.name = p.name WHERE a.key = 'site'";
        Set<String> first = guard.check(ok);
        assertEquals(Set.of("attributes", "producers"), first);
        assertSame(first, guard.check(ok));
        for (int i = 0; i < 2; i++) {
            ApiException e = assertThrows(ApiException.class, () -> guard.check("SELECT * FROM gma_endpoints"));
            assertEquals(403, e.status());
        }
    }

    @Test
    void refusesByTextNotByCacheWhenTheTextDiffers() {
        guard.check("SELECT name FROM endpoints");
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT name FROM endpoints; DROP TABLE gma_endpoints")).status());
    }

    @Test
    void cacheStaysBounded() {
        for (int i = 0; i < SqlGuard.APPROVED_CACHE_SIZE * 2; i++) {
            guard.check("SELECT name FROM endpoints WHERE port = " + i);
        }
        assertEquals(Set.of("endpoints"), guard.check("SELECT name FROM endpoints WHERE port = 0"));
        assertEquals(SqlGuard.APPROVED_CACHE_SIZE, guard.approvedCount());
    }
}
