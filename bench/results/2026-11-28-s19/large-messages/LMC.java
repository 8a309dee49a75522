import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/** GMA request/reply round trips of 256 KiB and 1 MiB in one JVM: wall-clock median and process CPU a round trip. */
public class LMC {
    public static void main(String[] a) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int n = Integer.parseInt(a[0]);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong");
                Ping ping = Ping.start(registry.url(), "lan")) {
            for (int size : new int[] {256 * 1024, 1 << 20}) {
                ping.run(pong.name(), n, size, true);
            }
            StringBuilder line = new StringBuilder();
            for (int size : new int[] {256 * 1024, 1 << 20}) {
                long cpu0 = os.getProcessCpuTime();
                long[] g = ping.run(pong.name(), n, size, true);
                long cpu = os.getProcessCpuTime() - cpu0;
                Arrays.sort(g);
                line.append(String.format(Locale.ROOT, "%dK p50 %.0f us cpu %.0f us/rt   ", size / 1024,
                        g[g.length / 2] / 1e3, cpu / 1e3 / n));
            }
            System.out.println(line);
        }
    }
}
