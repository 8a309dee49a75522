package io.gma.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.bench.compress.Payloads;
import org.junit.jupiter.api.Test;

/**
 * The compress stage sizes its passes by the plan's name: the suite runs a copy of its plan
 * ({@link Plan#withScale}), and a smoke or quick run that compared plans by identity ran the full plan's passes
 * (the suite's smoke test of this stage took 75 s).
 */
class CompressStageTest {
    @Test
    void aCopyOfTheSmokePlanRunsTheSmokePasses() {
        Plan copy = Plan.SMOKE.withScale(null, null, false);
        assertEquals(20, CompressStage.codecMillis(copy));
        assertEquals(2_000, CompressStage.messages(copy, Payloads.Kind.TEXT));
        assertEquals(400, CompressStage.codecMillis(Plan.FULL.withScale(null, null, false)));
    }
}
