package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Eight threads register, renew, query and unregister for ten seconds against one registry, some of them
 * racing for the same exact names: no call fails but with the documented 409, and no live name is held twice.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ConcurrencyTest {
    private static final int THREADS = 8;
    private static final long RUN_MILLIS = 10_000;

    @Test
    void eightThreadsForTenSecondsMakeNoErrorsAndNoDuplicateNames() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            List<String> errors = Collections.synchronizedList(new ArrayList<>());
            Set<String> exactHolders = ConcurrentHashMap.newKeySet();
            AtomicLong calls = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
            List<Future<Set<String>>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(thread);
                    List<String> mine = new ArrayList<>();
                    while (System.nanoTime() < end) {
                        try {
                            switch (random.nextInt(6)) {
                                case 0, 1 -> mine.add(client.register(Registration.builder(Kind.PRODUCER,
                                        "t" + thread, "race").port(1 + random.nextInt(60000))
                                        .attribute("n", "" + random.nextInt(10)).build()).name());
                                case 2 -> {
                                    if (!mine.isEmpty()) {
                                        client.renew(mine.get(random.nextInt(mine.size())));
                                    }
                                }
                                case 3 -> {
                                    if (!mine.isEmpty()) {
                                        client.unregister(mine.remove(random.nextInt(mine.size())));
                                    }
                                }
                                case 4 -> client.query("SELECT p.name FROM producers p JOIN attributes a ON"
                                        + " a.name = p.name WHERE a.key = 'n' AND a.value = '3' LIMIT 50");
                                default -> exact(client, random, exactHolders, errors);
                            }
                            calls.incrementAndGet();
                        } catch (RegistryException e) {
                            errors.add(e.status() + " " + e.getMessage());
                        }
                    }
                    return new HashSet<>(mine);
                }));
            }
            Set<String> live = new HashSet<>();
            for (Future<Set<String>> f : results) {
                for (String name : f.get()) {
                    assertTrue(live.add(name), "two threads hold " + name);
                }
            }
            pool.shutdown();
            assertEquals(List.of(), errors.subList(0, Math.min(errors.size(), 10)), errors.size() + " errors");
            QueryResult duplicates = client.query(
                    "SELECT name, COUNT(*) FROM endpoints GROUP BY name HAVING COUNT(*) > 1");
            assertEquals(List.of(), duplicates.rows());
            QueryResult all = client.query("SELECT name FROM endpoints WHERE domain = 'race' AND label LIKE 't%'");
            Set<String> registered = new HashSet<>();
            all.rows().forEach(r -> registered.add((String) r.get(0)));
            assertEquals(live, registered);
            assertTrue(calls.get() > 1000, "only " + calls.get() + " calls in 10 s");
        }
    }

    /** Races for one of three exact names: a 409 is the documented answer, anything else an error. */
    private static void exact(RegistryClient client, Random random, Set<String> holders, List<String> errors)
            throws RegistryException {
        String label = "svc" + random.nextInt(3);
        try {
            String name = client.register(Registration.builder(Kind.CONSUMER, label, "race").port(9)
                    .lease(Duration.ofSeconds(30)).exact(true).build()).name();
            if (!holders.add(name)) {
                errors.add("exact name " + name + " granted while another thread held it");
            }
            holders.remove(name);
            client.unregister(name);
        } catch (RegistryException e) {
            if (e.status() != 409) {
                throw e;
            }
        }
    }
}
