package io.gma.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws a {@link Figure} as a PNG with XChart: one line per series with a marker per point, log axes where the
 * figure asks, baselines (series whose name starts with "raw") dashed in grey so that GMA and the peers stand
 * out against them. Headless: nothing opens a window.
 */
final class Plots {
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf)};
    private static final Color[] GREYS = {new Color(0x404040), new Color(0x808080), new Color(0xb0b0b0)};

    private Plots() {
    }

    /** Writes {@code <id>.png} into dir and returns its path. */
    static Path writePng(Figure figure, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(960).height(600).title(figure.title).xAxisTitle(figure.xAxis)
                .yAxisTitle(figure.yAxis).build();
        var styler = chart.getStyler();
        styler.setXAxisLogarithmic(figure.logX);
        styler.setYAxisLogarithmic(figure.logY);
        styler.setLegendPosition(LegendPosition.OutsideS);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setMarkerSize(7);
        // a formatting function would replace a log axis' decade ticks with linear ones: linear axes only
        if (figure.logX) {
            styler.setXAxisDecimalPattern("#,##0.##");
        } else {
            styler.setxAxisTickLabelsFormattingFunction(Plots::tick);
        }
        if (figure.logY) {
            styler.setYAxisDecimalPattern("#,##0.##");
            // over two decades or less, a label at 2, 3, ... 9 of each decade too; more would crowd
            double[] ys = figure.series.values().stream().flatMap(List::stream).mapToDouble(p -> p[1])
                    .filter(y -> y > 0).toArray();
            double spread = ys.length == 0 ? 1 : Arrays.stream(ys).max().getAsDouble()
                    / Arrays.stream(ys).min().getAsDouble();
            styler.setYAxisLogarithmicDecadeOnly(spread > 100);
        } else {
            styler.setyAxisTickLabelsFormattingFunction(Plots::tick);
        }
        int color = 0;
        int grey = 0;
        for (var entry : figure.series.entrySet()) {
            List<double[]> points = entry.getValue().stream()
                    .filter(p -> (!figure.logX || p[0] > 0) && (!figure.logY || p[1] > 0)).toList();
            if (points.isEmpty()) {
                continue;
            }
            XYSeries s = chart.addSeries(entry.getKey(), points.stream().mapToDouble(p -> p[0]).toArray(),
                    points.stream().mapToDouble(p -> p[1]).toArray());
            if (entry.getKey().startsWith("raw")) {
                s.setLineColor(GREYS[grey % GREYS.length]);
                s.setMarkerColor(GREYS[grey++ % GREYS.length]);
                s.setLineStyle(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
                        new float[] {8f, 5f}, 0f));
                s.setMarker(SeriesMarkers.SQUARE);
            } else {
                s.setLineColor(COLORS[color % COLORS.length]);
                s.setMarkerColor(COLORS[color++ % COLORS.length]);
                s.setLineStyle(SeriesLines.SOLID);
                s.setMarker(SeriesMarkers.CIRCLE);
            }
        }
        Path file = dir.resolve(figure.id + ".png");
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    /** Axis ticks as people write sizes and rates: 1, 64, 1K, 16K, 1M, 2.5M. */
    static String tick(double v) {
        double a = Math.abs(v);
        if (a >= 1e9) {
            return trim(v / 1e9) + "G";
        } else if (a >= 1e6) {
            return trim(v / 1e6) + "M";
        } else if (a >= 1e4) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    private static String trim(double v) {
        return String.format(Locale.ROOT, Math.abs(v) >= 10 || v == Math.rint(v) ? "%.0f" : "%.1f", v);
    }
}
