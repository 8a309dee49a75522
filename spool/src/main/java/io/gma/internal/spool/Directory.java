package io.gma.internal.spool;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/** What a spool needs of its directory: one owner at a time, and names made or removed there kept on disk. */
final class Directory {
    static final String LOCK_FILE = "spool.lock";

    private Directory() {
    }

    /**
     * Forces the directory's entries to the disk: a file made or deleted there survives a power loss only once
     * its directory was forced.
     */
    static void force(Path dir) throws IOException {
        try (FileChannel c = FileChannel.open(dir, StandardOpenOption.READ)) {
            c.force(true);
        }
    }

    /**
     * Takes {@code dir} for this process, until the returned lock is released (or the process ends): its lock file
     * names this process, so that another that finds it taken can say by whom.
     *
     * @throws SpoolException when another live process (or this one) has it, naming the directory and the owner
     */
    static FileLock lock(Path dir) throws IOException {
        Path file = dir.resolve(LOCK_FILE);
        FileChannel c = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = c.tryLock();
        } catch (OverlappingFileLockException sameProcess) {
            lock = null;
        }
        if (lock == null) {
            String owner = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).strip();
            c.close();
            throw new SpoolException("the spool directory " + dir.toAbsolutePath() + " is in use by "
                    + (owner.isEmpty() ? "another process" : "process " + owner) + " (its lock file " + file
                    + "): one process at a time may use a spool directory", false, null);
        }
        c.truncate(0);
        c.write(ByteBuffer.wrap(owner().getBytes(StandardCharsets.UTF_8)), 0);
        c.force(false);
        return lock;
    }

    /** This process, as {@code pid@host}. */
    private static String owner() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        return ProcessHandle.current().pid() + "@" + host;
    }

    /** The segment and acknowledgement files of {@code dir}, by kind, oldest first. */
    static List<Path> files(Path dir, String suffix) throws IOException {
        try (Stream<Path> all = Files.list(dir)) {
            return all.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }
}
