package io.gma.bench;

import io.gma.bench.registry.LookupBench;
import java.util.List;

/**
 * The registry's look-up with {@link Plan#registryEndpoints} endpoints registered in PostgreSQL, beside a plain
 * Jetty servlet running the same SELECT by JDBC on the same database ({@link LookupBench}): the goal is a
 * median under 1.5x the plain servlet's. Needs a PostgreSQL, which the suite does not start: {@link #DATABASE}
 * names where to find it, and without it the stage is a usage error. Not among the stages a run has by default.
 */
final class RegistryStage {
    static final String FIGURE = "registry-lookup";
    /** The goal: the registry's median look-up at most this many times the plain servlet's. */
    static final double GOAL = 1.5;
    /** Where the PostgreSQL is (a JDBC URL with user and password): this variable, else {@link #CI_DATABASE}. */
    static final String DATABASE = "GMA_BENCH_POSTGRES_URL";
    /** What .ci/postgres.sh's gma_postgres_start exports. */
    static final String CI_DATABASE = "GMA_TEST_POSTGRES_URL";

    private RegistryStage() {
    }

    /** The JDBC URL of the PostgreSQL to measure on, or null when none is given. */
    static String database() {
        String url = System.getenv(DATABASE);
        return url != null && !url.isBlank() ? url : System.getenv(CI_DATABASE);
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        String database = database();
        if (database == null || !database.startsWith("jdbc:postgresql:")) {
            throw new IllegalStateException("the registry stage needs a PostgreSQL: set " + DATABASE + " to its JDBC"
                    + " URL, user and password in it (or source .ci/postgres.sh; gma_postgres_start)");
        }
        Figure figure = new Figure(FIGURE, "Registry look-up with endpoints in PostgreSQL, beside a plain servlet",
                "endpoints registered", "look-up p50 µs", false, false, "endpoints", "p50_us", "p99_us",
                "calls_per_s", "calls");
        progress.stage("registry look-up", 1);
        progress.step(plan.registryEndpoints() + " endpoints in PostgreSQL");
        LookupBench.Result r = LookupBench.run(database, plan.registryEndpoints(), plan.registryCalls());
        add(figure, LookupBench.REGISTRY, plan.registryEndpoints(), r.registry());
        add(figure, LookupBench.PLAIN, plan.registryEndpoints(), r.plain());
        add(figure, LookupBench.CLIENT_ONE, plan.registryEndpoints(), r.clientOne());
        add(figure, LookupBench.CLIENT_TWO, plan.registryEndpoints(), r.clientTwo());
        figure.notes.add("One client thread, closed loop, names drawn at random; each series in five passes taking"
                + " turns with the others. The plain servlet runs the registry's look-up statement through a pool of"
                + " the same size and writes the same JSON; RegistryClient adds the client's JSON parsing, the same"
                + " with one URL or two (the second a registry on the same database).");
        progress.finish();
        return List.of(figure);
    }

    private static void add(Figure figure, String series, int endpoints, LookupBench.Series s) {
        figure.add(series, endpoints, s.percentileMicros(0.50), s.percentileMicros(0.99), s.perSecond(),
                s.nanos().length);
    }
}
