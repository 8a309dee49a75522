import io.gma.wire.Command;
import io.gma.wire.Envelope;
import java.util.Locale;

/** Packing 1 MiB and 256 KiB: allocate then put() (header first, the data last) against pack() (the data first). */
public class PackBench {
    public static void main(String[] a) throws Exception {
        Envelope e = Envelope.of("ping-abcdef@lan", "pong@lan");
        long sink = 0;
        for (int size : new int[] {256 * 1024, 1 << 20}) {
            byte[] data = new byte[size];
            int n = size > 300_000 ? 2000 : 8000;
            for (int r = 0; r < 8; r++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    byte[] p = new byte[e.packedLength(Command.DATA, data)];
                    e.put(i, Command.DATA, 0, data, p, 0);
                    sink += p[i & 1023];
                }
                long t1 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    sink += e.pack(i, Command.DATA, 0, data)[i & 1023];
                }
                long t2 = System.nanoTime();
                System.out.printf(Locale.ROOT, "%d KiB: put after new %.1f us, pack %.1f us, %.2fx%n", size / 1024,
                        (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n, (double) (t2 - t1) / (t1 - t0));
            }
        }
        System.out.println(sink == 42 ? "" : "done");
    }
}
