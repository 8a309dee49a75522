package io.gma.internal.spool;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * For {@link SpoolCrashTest}: appends 10 records written at once, marks every odd one with
 * {@link Spool#ackWritten(long, long, TimeUnit)} (or plain {@link Spool#ack} when told), then halts, as a kill at
 * that moment would.
 *
 * <pre>AckWrittenMain DIR written|plain</pre>
 */
public final class AckWrittenMain {
    private AckWrittenMain() {
    }

    public static void main(String[] args) throws Exception {
        boolean written = args[1].equals("written");
        Spool spool = Spool.open(Path.of(args[0]), new SpoolSettings(Fsync.BATCH, 256L << 20, 64 << 10), r -> { });
        for (int i = 0; i < 10; i++) {
            long seq = spool.appendWritten(System.currentTimeMillis(), (byte) 1, "writer",
                    ("record " + i).getBytes(StandardCharsets.UTF_8));
            if (i % 2 == 1) {
                if (written) {
                    if (!spool.ackWritten(seq, 10, TimeUnit.SECONDS)) {
                        throw new AssertionError("the mark of " + seq + " was not written within 10 s");
                    }
                } else {
                    spool.ack(seq);
                }
            }
        }
        System.out.println("halting");
        System.out.flush();
        Runtime.getRuntime().halt(137);
    }
}
