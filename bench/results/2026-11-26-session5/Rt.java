import io.gma.client.*;
import io.gma.pcservlet.*;
import io.gma.registry.Registry;
import java.nio.file.*;
import java.time.Duration;
import java.util.Arrays;

public class Rt {
    public static void main(String[] a) throws Exception {
        int rounds = Integer.parseInt(a[0]);
        for (int pass = 0; pass < 4; pass++) {
            for (int w : new int[] {1, 4}) {
                Path dir = Files.createTempDirectory("rt");
                try (Registry registry = Registry.builder().port(0).build().start();
                        PcServer east = PcServer.builder("east", registry.url()).maxBatchesInFlight(w)
                                .spool(SpoolOptions.in(dir.resolve("east"))).start();
                        PcServer west = PcServer.builder("west", registry.url()).maxBatchesInFlight(w)
                                .spool(SpoolOptions.in(dir.resolve("west"))).start();
                        Consumer pong = Consumer.builder().registry(registry.url()).domain("west")
                                .pcServlet(west.uplink()).label("pong").onMessage(m -> m.reply(m.data())).build();
                        Producer ping = Producer.builder().registry(registry.url()).domain("east")
                                .pcServlet(east.uplink()).label("ping").build()) {

                    byte[] data = new byte[64];
                    for (int i = 0; i < rounds; i++) {
                        ping.request(pong.name(), data, Duration.ofSeconds(10));
                    }
                    long[] t = new long[rounds];
                    for (int i = 0; i < rounds; i++) {
                        long s = System.nanoTime();
                        ping.request(pong.name(), data, Duration.ofSeconds(10));
                        t[i] = System.nanoTime() - s;
                    }
                    Arrays.sort(t);
                    System.out.printf("W=%d p50 %d us p99 %d us%n", w, t[rounds / 2] / 1000, t[rounds * 99 / 100] / 1000);
                }
            }
        }
    }
}
