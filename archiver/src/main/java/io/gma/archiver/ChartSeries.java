package io.gma.archiver;

import io.gma.client.TableRow;
import io.gma.tables.Row;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Rows of a chart's query as the page draws them: one series per value of the {@code by} columns (its key, the
 * values joined by " / "), each point the mean of the values in a bucket of {@link ChartRequest#bucketMillis()},
 * buckets aligned to the epoch so that every series, and the live rows the page adds, share their times. Only
 * the {@link ChartRequest#top()} keys with the highest latest values are kept. NULL, NaN and infinite values are
 * left out (JSON has none of them).
 */
final class ChartSeries {
    private ChartSeries() {
    }

    /** A series being built: its buckets (time to sum and count) and its newest value. */
    private static final class Building {
        final TreeMap<Long, double[]> buckets = new TreeMap<>();
        long newestMicros = Long.MIN_VALUE;
        double newest;
    }

    /**
     * The answer to {@code GET /data/v1/series}.
     *
     * @param rows the history's rows, in any order
     * @param truncated whether the history held more rows than were read
     * @param sinceMicros the start of the period
     * @param nowMicros when the history was asked for: the answer's {@code until} when no row came
     */
    static Map<String, Object> answer(ChartRequest q, List<TableRow> rows, boolean truncated, long sinceMicros,
            long nowMicros) {
        long width = q.bucketMillis();
        Map<String, Building> keys = new HashMap<>();
        long until = Long.MIN_VALUE;
        long oldest = Long.MAX_VALUE;
        for (TableRow r : rows) {
            until = Math.max(until, r.insertMicros());
            oldest = Math.min(oldest, r.insertMicros());
            Double v = value(q, r.row());
            if (v == null) {
                continue;
            }
            Building b = keys.computeIfAbsent(key(q, r.row()), k -> new Building());
            long bucket = Math.floorDiv(Math.floorDiv(r.insertMicros(), 1000), width) * width;
            double[] sum = b.buckets.computeIfAbsent(bucket, t -> new double[2]);
            sum[0] += v;
            sum[1]++;
            if (r.insertMicros() > b.newestMicros) {
                b.newestMicros = r.insertMicros();
                b.newest = v;
            }
        }
        List<Map.Entry<String, Building>> ranked = new ArrayList<>(keys.entrySet());
        ranked.sort(Comparator.comparingDouble((Map.Entry<String, Building> e) -> -e.getValue().newest)
                .thenComparing(Map.Entry::getKey));
        List<Map<String, Object>> series = new ArrayList<>();
        for (Map.Entry<String, Building> e : ranked.subList(0, Math.min(q.top(), ranked.size()))) {
            List<Object[]> points = new ArrayList<>();
            e.getValue().buckets.forEach((t, sum) -> points.add(new Object[] {t, sum[0] / sum[1]}));
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("key", e.getKey());
            s.put("latest", e.getValue().newest);
            s.put("points", points);
            series.add(s);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("table", q.schema().name());
        out.put("column", q.column());
        out.put("by", q.by());
        out.put("range", q.range());
        out.put("rangeMillis", q.period().toMillis());
        out.put("bucketMillis", width);
        out.put("top", q.top());
        out.put("since", sinceMicros);
        out.put("until", rows.isEmpty() ? nowMicros : until);
        out.put("oldest", rows.isEmpty() ? null : oldest);
        out.put("rowsRead", rows.size());
        out.put("truncated", truncated);
        out.put("keys", keys.size());
        out.put("series", series);
        return out;
    }

    /** Rows as a live event carries them: {@code [key, insert time in ms, value]} each, oldest first. */
    static List<Object[]> points(ChartRequest q, List<TableRow> rows) {
        List<Object[]> out = new ArrayList<>(rows.size());
        for (TableRow r : rows) {
            Double v = value(q, r.row());
            if (v != null) {
                out.add(new Object[] {key(q, r.row()), Math.floorDiv(r.insertMicros(), 1000), v});
            }
        }
        out.sort(Comparator.comparingLong(p -> (Long) p[1]));
        return out;
    }

    /** The values of the {@code by} columns (the first of the row), joined by " / ". */
    static String key(ChartRequest q, Row row) {
        StringBuilder k = new StringBuilder();
        for (int i = 0; i < q.by().size(); i++) {
            if (i > 0) {
                k.append(" / ");
            }
            Object v = row.get(i);
            k.append(v == null ? "NULL" : v.toString());
        }
        return k.toString();
    }

    /** The charted column's value (the row's last), or null when it is NULL, NaN or infinite. */
    static Double value(ChartRequest q, Row row) {
        Object v = row.get(q.by().size());
        if (!(v instanceof Number n) || !Double.isFinite(n.doubleValue())) {
            return null;
        }
        return n.doubleValue();
    }
}
