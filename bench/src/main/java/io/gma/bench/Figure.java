package io.gma.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeSet;

/**
 * One figure of the suite: named series of points, each point the figure's columns in order. Column 0 is the x
 * axis and column 1 the plotted y; the other columns (p99, counts) go to the CSV only. Written as
 * {@code <id>.csv} (one row a point: the series, then the columns) and drawn as {@code <id>.png} by {@link Plots}.
 */
final class Figure {
    final String id;
    final String title;
    final String xAxis;
    final String yAxis;
    final boolean logX;
    final boolean logY;
    final List<String> columns;
    /** Series in the order first added; each point has {@code columns.size()} values. */
    final Map<String, List<double[]>> series = new LinkedHashMap<>();
    /** Markdown the summary prints under the figure's table (what the table alone does not say); may be empty. */
    final List<String> notes = new ArrayList<>();

    /**
     * @param id the file name, without extension
     * @param xAxis the x axis title, with its unit
     * @param yAxis the y axis title, with its unit
     * @param columns the CSV columns of a point, x first, then y
     */
    Figure(String id, String title, String xAxis, String yAxis, boolean logX, boolean logY, String... columns) {
        if (columns.length < 2) {
            throw new IllegalArgumentException("figure " + id + " has " + columns.length + " columns, needs 2 or more");
        }
        this.id = id;
        this.title = title;
        this.xAxis = xAxis;
        this.yAxis = yAxis;
        this.logX = logX;
        this.logY = logY;
        this.columns = List.of(columns);
    }

    /** Adds a point to {@code name}, creating the series the first time. */
    void add(String name, double... values) {
        if (values.length != columns.size()) {
            throw new IllegalArgumentException("a point of " + id + " has " + values.length + " values, expected "
                    + columns.size() + " " + columns);
        }
        series.computeIfAbsent(name, n -> new ArrayList<>()).add(values.clone());
    }

    /** The y value of {@code name} at x, if measured. */
    OptionalDouble y(String name, double x) {
        return value(name, x, 1);
    }

    /** The value in {@code column} (0 is x, 1 is y) of {@code name}'s point at x, if measured. */
    OptionalDouble value(String name, double x, int column) {
        for (double[] p : series.getOrDefault(name, List.of())) {
            if (p[0] == x) {
                return OptionalDouble.of(p[column]);
            }
        }
        return OptionalDouble.empty();
    }

    /** Writes {@code <id>.csv} into dir and returns its path. */
    Path writeCsv(Path dir) throws IOException {
        StringBuilder csv = new StringBuilder("series,").append(String.join(",", columns)).append('\n');
        series.forEach((name, points) -> {
            for (double[] p : points) {
                csv.append('"').append(name.replace("\"", "\"\"")).append('"');
                for (double v : p) {
                    csv.append(',').append(v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v)
                            : String.format(Locale.ROOT, "%.3f", v));
                }
                csv.append('\n');
            }
        });
        Path file = dir.resolve(id + ".csv");
        Files.writeString(file, csv, StandardCharsets.UTF_8);
        return file;
    }

    /** A Markdown table of y: one row per x, one column per series ("-" where a series has no point). */
    String markdownTable() {
        TreeSet<Double> xs = new TreeSet<>();
        series.values().forEach(points -> points.forEach(p -> xs.add(p[0])));
        StringBuilder md = new StringBuilder("| ").append(xAxis);
        series.keySet().forEach(name -> md.append(" | ").append(name));
        md.append(" |\n|---").append("|---".repeat(series.size())).append("|\n");
        for (double x : xs) {
            md.append("| ").append(number(x));
            for (String name : series.keySet()) {
                OptionalDouble y = y(name, x);
                md.append(" | ").append(y.isPresent() ? number(y.getAsDouble()) : "-");
            }
            md.append(" |\n");
        }
        return md.toString();
    }

    /** Thousands separators from 100 up, one decimal from 1, two below: enough digits for the noise. */
    static String number(double v) {
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 || v == Math.rint(v) ? "%,.0f" : a >= 1 ? "%.1f" : "%.2f", v);
    }
}
