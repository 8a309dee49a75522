package io.gma.bench.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's proof in the default suite: real processes, PC servlets killed with SIGKILL in the middle of a stream
 * and restarted with the same command line; of everything acknowledged to the producer, nothing is lost and
 * nothing duplicated. The long run (50 kills, also during fsync and segment rolls) is {@code gma bench crash}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CrashHarnessTest {
    @TempDir
    Path dir;

    private static void assertExactlyOnce(CrashHarness.Result r) {
        assertTrue(r.acked() > 0, r.line());
        assertEquals(0, r.lost(), r.line());
        assertEquals(0, r.duplicated(), r.line());
        assertTrue(r.received() >= r.acked(), r.line());
    }

    /** A stream flat out, with {@code kills} kills, the two PC servlets in turn, each run with {@code options}. */
    private CrashHarness.Result run(CrashHarness.Topology topology, int kills, String... options) throws Exception {
        List<String> pc = new java.util.ArrayList<>(List.of("--max-spool-bytes", "16777216"));
        pc.addAll(List.of(options));
        CrashHarness.Result r = CrashHarness.run(new CrashHarness.Settings(topology, kills, 0, 256, 1500, pc,
                System.nanoTime(), dir), System.out);
        System.out.println(r.line() + "; spool " + r.spool());
        return r;
    }

    @Test
    void threeKillsOfEachPcServletLoseAndDuplicateNothingAcrossDomains() throws Exception {
        // four batches in flight: kills cut POSTs waiting for their turn, and the sender goes back N
        assertExactlyOnce(run(CrashHarness.Topology.CROSS_DOMAIN, 6, "--max-batches-in-flight", "4"));
    }

    @Test
    void killsOfTheRelayAndTheOutboundOnlyDomainLoseAndDuplicateNothing() throws Exception {
        assertExactlyOnce(run(CrashHarness.Topology.RELAYED, 4));
    }
}
