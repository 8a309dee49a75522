package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PrometheusTextTest {
    @Test
    void writesACounterWithHelpTypeAndLabels() {
        StringBuilder out = new StringBuilder();
        PrometheusText.counter(out, "gma_x_total", "Things", PrometheusText.label("endpoint", "a@b") + ","
                + PrometheusText.label("reason", "over_cap"), 3);
        PrometheusText.gauge(out, "gma_y", "Now", null, 2.5);
        assertEquals("# HELP gma_x_total Things\n# TYPE gma_x_total counter\n"
                + "gma_x_total{endpoint=\"a@b\",reason=\"over_cap\"} 3\n"
                + "# HELP gma_y Now\n# TYPE gma_y gauge\ngma_y 2.5\n", out.toString());
    }

    @Test
    void escapesLabelValues() {
        assertEquals("k=\"a\\\\b\\\"c\\nd\"", PrometheusText.label("k", "a\\b\"c\nd"));
    }

    @Test
    void formatsNumbersWithoutExponent() {
        assertEquals("0.0001", PrometheusText.format(0.0001));
        assertEquals("12345678901", PrometheusText.format(12345678901.0));
        assertEquals("0.000012", PrometheusText.format(1.2e-5));
        assertEquals("+Inf", PrometheusText.format(Double.POSITIVE_INFINITY));
        assertEquals("NaN", PrometheusText.format(Double.NaN));
    }

    @Test
    void histogramBucketsAreCumulativeAndEndAtInf() {
        PrometheusText.Histogram h = new PrometheusText.Histogram(0.0001, 0.01, 1);
        h.record(50_000); // 0.00005 s
        h.record(100_000); // 0.0001 s: on the bound, in its bucket
        h.record(5_000_000); // 0.005 s
        h.record(3_000_000_000L); // 3 s: past every bound
        StringBuilder out = new StringBuilder();
        h.write(out, "gma_q_seconds", "Query time");
        assertEquals("# HELP gma_q_seconds Query time\n# TYPE gma_q_seconds histogram\n"
                + "gma_q_seconds_bucket{le=\"0.0001\"} 2\ngma_q_seconds_bucket{le=\"0.01\"} 3\n"
                + "gma_q_seconds_bucket{le=\"1\"} 3\ngma_q_seconds_bucket{le=\"+Inf\"} 4\n"
                + "gma_q_seconds_sum 3.00515\ngma_q_seconds_count 4\n", out.toString());
    }

    @Test
    void refusesBoundsThatDoNotIncrease() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PrometheusText.Histogram(0.1, 0.1));
        assertEquals("bucket bound 0.1 at 1 is not finite, positive and above the one before", e.getMessage());
        assertThrows(IllegalArgumentException.class, PrometheusText.Histogram::new);
        assertThrows(IllegalArgumentException.class, () -> new PrometheusText.Histogram(-1));
    }
}
