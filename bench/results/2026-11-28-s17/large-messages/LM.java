import io.gma.bench.pingpong.PingPongBench;
import io.gma.bench.pingpong.PingPongBench.RawEcho;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import java.util.Locale;

public class LM {
    public static void main(String[] a) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int reps = Integer.parseInt(a[0]);
        int n = Integer.parseInt(a[1]);
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong");
                Ping ping = Ping.start(registry.url(), "lan");
                RawEcho raw = new RawEcho()) {
            for (int size : new int[] {256 * 1024, 1 << 20}) {
                raw.run(size, n);
                ping.run(pong.name(), n, size, true);
            }
            for (int r = 0; r < reps; r++) {
                StringBuilder line = new StringBuilder();
                for (int size : new int[] {256 * 1024, 1 << 20}) {
                    long[] x = raw.run(size, n);
                    long[] g = ping.run(pong.name(), n, size, true);
                    double rp = PingPongBench.pct(x, 0.5);
                    double gp = PingPongBench.pct(g, 0.5);
                    line.append(String.format(Locale.ROOT, "%dK raw %.0f gma %.0f %.2fx   ", size / 1024, rp, gp, gp / rp));
                }
                System.out.println(line);
            }
        }
    }
}
