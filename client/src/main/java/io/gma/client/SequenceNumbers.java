package io.gma.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sequence numbers of the messages an endpoint originates (protocol.md section 1): each new one above every
 * one before it, across restarts too when the endpoint's name stays the same. A receiver remembers the numbers it
 * delivered from each sender name and drops a number it has seen as a duplicate, so a restarted endpoint that
 * numbered from 1 again would have its first messages dropped by receivers that still remember the run before.
 *
 * <ul>
 *   <li>A name with a nonce is new on every run: it numbers from 1.
 *   <li>An exact name numbers from the clock: milliseconds since the epoch times 2^20. A later run starts above
 *       every number an earlier one used unless that run sent more than 2^20 messages for each millisecond it
 *       lived (a billion a second), or the clock went back by nearly the time between the two starts.
 *   <li>With an outbox, also above every number reserved in its directory's {@code sequence} file: numbers are
 *       reserved in blocks of 2^20, each block forced to disk before its first number is used, so a crash can
 *       skip numbers (gaps are normal: one receiver sees only the numbers sent to it) but never use one twice,
 *       whatever the clock does.
 * </ul>
 *
 * <p>The hot path is one atomic increment and a compare. Reserving a block writes and forces a small file under
 * this object's monitor, which the senders that ran past the block wait for: the monitor guards exactly that
 * write (no other lock is held), once every 2^20 messages.
 */
final class SequenceNumbers {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** Numbers a millisecond of the clock makes room for. */
    static final int CLOCK_SHIFT = 20;
    /** Numbers reserved at a time in the file. */
    static final long BLOCK = 1L << 20;
    static final String FILE = "sequence";
    private static final int MAGIC = 0x47535131; // "GSQ1"
    private static final int FILE_BYTES = 16;

    private final AtomicLong last;
    /** The file of reserved numbers; null: none, nothing to reserve. */
    private final Path file;
    /** The highest number reserved; Long.MAX_VALUE without a file. */
    private volatile long reservedThrough;

    private SequenceNumbers(long first, Path file, long reservedThrough) {
        this.last = new AtomicLong(first - 1);
        this.file = file;
        this.reservedThrough = reservedThrough;
    }

    /** From 1: for a name with a nonce, new on every run. */
    static SequenceNumbers fromOne() {
        return new SequenceNumbers(1, null, Long.MAX_VALUE);
    }

    /** From the clock: for an exact name without an outbox. */
    static SequenceNumbers fromClock() {
        return new SequenceNumbers(clockFloor(), null, Long.MAX_VALUE);
    }

    /**
     * From above what {@code dir}'s {@code sequence} file reserved, and the clock: for an endpoint with an outbox
     * there. Reserves the first block before it returns.
     *
     * @param atLeast a number the first may not be below either (past the highest found in the outbox)
     * @throws IOException when the file cannot be written
     */
    static SequenceNumbers reserved(Path dir, long atLeast) throws IOException {
        Path file = dir.resolve(FILE);
        long before;
        try {
            before = read(file);
        } catch (NoSuchFileException none) {
            before = 0;
        } catch (IOException damaged) {
            // the clock (and the outbox's own numbers) still say where the earlier runs got to, short of a clock
            // that went back; the file is written whole again below
            LOG.warn("outbox {}: its sequence file is damaged ({}); numbering goes on from the clock", dir,
                    damaged.getMessage());
            before = 0;
        }
        long first = Math.max(Math.max(before + 1, atLeast), clockFloor());
        long through = first - 1 + BLOCK;
        write(file, through);
        return new SequenceNumbers(first, file, through);
    }

    /** The number the clock gives now: above what a run that started earlier used. */
    static long clockFloor() {
        return System.currentTimeMillis() << CLOCK_SHIFT;
    }

    /**
     * The next number.
     *
     * @throws UncheckedIOException when a new block could not be reserved (the outbox's disk failed)
     */
    long next() {
        long n = last.incrementAndGet();
        if (n > reservedThrough) {
            reserve(n);
        }
        return n;
    }

    /** The last number given, or the one before the first. */
    long last() {
        return last.get();
    }

    /** Reserves blocks until {@code n} is in one; whoever ran past the block waits here for it. */
    private synchronized void reserve(long n) {
        while (n > reservedThrough) {
            long through = reservedThrough + BLOCK;
            try {
                write(file, through);
            } catch (IOException e) {
                throw new UncheckedIOException("outbox " + file.getParent() + ": cannot reserve sequence numbers"
                        + " past " + Long.toUnsignedString(reservedThrough) + " in " + file + ": " + e.getMessage()
                        + "; nothing more is numbered", e);
            }
            reservedThrough = through;
        }
    }

    /** The number a file reserved through; a file whose magic or CRC is wrong is damaged. */
    static long read(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (bytes.length != FILE_BYTES || b.getInt(0) != MAGIC || b.getInt(12) != crc(bytes)) {
            throw new IOException(file + " is not " + FILE_BYTES + " bytes of magic GSQ1, a number and its CRC32C");
        }
        return b.getLong(4);
    }

    /**
     * Replaces the file with one that says {@code through}, whole or not at all: written to a temporary file and
     * forced, renamed over it, and the directory forced, so that a crash leaves the old file or the new one.
     */
    static void write(Path file, long through) throws IOException {
        byte[] bytes = new byte[FILE_BYTES];
        ByteBuffer b = ByteBuffer.wrap(bytes);
        b.putInt(0, MAGIC);
        b.putLong(4, through);
        b.putInt(12, crc(bytes));
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            c.write(ByteBuffer.wrap(bytes));
            c.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /** The CRC32C of the magic and the number. */
    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, 12);
        return (int) crc.getValue();
    }
}
