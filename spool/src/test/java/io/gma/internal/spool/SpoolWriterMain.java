package io.gma.internal.spool;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A process that writes a spool until it is killed, for {@link SpoolCrashTest}: it appends numbered records as
 * fast as it can and prints {@code durable SEQ N} once record SEQ (the N-th) is durable; every other one it then
 * acknowledges, and prints {@code acked SEQ}. With a crash point, it halts there, as a kill at that moment would.
 *
 * <pre>SpoolWriterMain DIR FSYNC SEGMENT_BYTES CRASH_POINT|none ACK_ALL(true|false)</pre>
 */
public final class SpoolWriterMain {
    private SpoolWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Fsync fsync = Fsync.valueOf(args[1]);
        long segmentBytes = Long.parseLong(args[2]);
        String crashAt = args[3];
        boolean ackAll = Boolean.parseBoolean(args[4]);
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        if (!crashAt.equals("none")) {
            Spool.crashPoints = point -> {
                if (point.equals(crashAt)) {
                    out.println("halting at " + point);
                    Runtime.getRuntime().halt(137);
                }
            };
        }
        Spool spool = Spool.open(dir, new SpoolSettings(fsync, 256L << 20, segmentBytes), r -> { });
        out.println("opened");
        for (long n = 0; ; n++) {
            long i = n;
            byte[] payload = new byte[300];
            byte[] tag = ("record " + i).getBytes(StandardCharsets.UTF_8);
            System.arraycopy(tag, 0, payload, 0, tag.length);
            long seq = spool.append(System.currentTimeMillis(), (byte) 1, "writer", payload);
            spool.whenSafe(seq, () -> {
                synchronized (out) {
                    out.println("durable " + seq + " " + i);
                }
                if (ackAll || i % 2 == 0) {
                    spool.ack(seq);
                    synchronized (out) {
                        out.println("acked " + seq);
                    }
                }
            });
            if (n % 64 == 0) {
                Thread.yield();
            }
        }
    }
}
