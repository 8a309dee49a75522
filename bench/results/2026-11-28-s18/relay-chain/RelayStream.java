import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bound for streaming across domains through links on event loops: a producer streams 1 KB DATA to relay A,
 * which forwards each to relay B, which forwards it to the sink (each relay's handler on a thread of its own, as a send from the event loop must not block it; direct links), against
 * the same producer streaming to the sink directly, in one JVM.
 */
public class RelayStream {
    static Producer relay(String registry, String label, String next) throws Exception {
        Producer[] self = new Producer[1];
        self[0] = Producer.builder().registry(registry).domain("lan").label(label).exactLabel(true)
                .executor(java.util.concurrent.Executors.newSingleThreadExecutor(r -> { Thread t = new Thread(r, label); t.setDaemon(true); return t; })).onMessage(m -> self[0].send(next, m.data())).build();
        return self[0];
    }

    public static void main(String[] a) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        int n = Integer.parseInt(a.length > 0 ? a[0] : "1000000");
        int size = Integer.parseInt(a.length > 1 ? a[1] : "1024");
        AtomicLong got = new AtomicLong();
        CountDownLatch[] done = new CountDownLatch[1];
        long[] target = new long[1];
        try (Registry registry = Registry.builder().port(0).build().start();
                Consumer sink = Consumer.builder().registry(registry.url()).domain("lan").label("sink").exactLabel(true)
                        .onMessage(m -> {
                            if (got.incrementAndGet() == target[0]) {
                                done[0].countDown();
                            }
                        }).build();
                Producer relayB = relay(registry.url(), "relayb", "sink@lan");
                Producer relayA = relay(registry.url(), "relaya", "relayb@lan");
                Producer source = Producer.builder().registry(registry.url()).domain("lan").label("source").build()) {
            byte[] data = new byte[size];
            for (int rep = 0; rep < 4; rep++) {
                for (String to : new String[] {"sink@lan", "relaya@lan"}) {
                    done[0] = new CountDownLatch(1);
                    target[0] = got.get() + n;
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        source.send(to, data);
                    }
                    done[0].await();
                    double s = (System.nanoTime() - t0) / 1e9;
                    System.out.printf("%s %d B: %.0f messages/s%n", to.startsWith("sink") ? "direct" : "relayed (2 relays)", size, n / s);
                }
            }
        }
    }
}
