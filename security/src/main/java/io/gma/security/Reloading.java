package io.gma.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Material read from files, and read again when they change (size or modification time), checked at most once
 * per interval, on the thread that asks. A reload that fails keeps the previous material and says so in the log.
 */
abstract class Reloading<T> implements Supplier<T> {
    private static final Logger LOG = LoggerFactory.getLogger(Reloading.class);
    private final List<Path> files;
    private final String what;
    private final long checkNanos;
    private volatile T current;
    private volatile long stamp;
    private volatile long checkedAt;

    /**
     * @param files what the material is read from (empty: never reloaded)
     * @param what what it is, for the log ("TLS", "trust")
     * @throws IOException if the first read fails
     */
    Reloading(List<Path> files, String what, Duration check) throws IOException {
        this.files = List.copyOf(files);
        this.what = what;
        this.checkNanos = check.toNanos();
        this.stamp = stamp();
        this.current = load();
        this.checkedAt = System.nanoTime();
    }

    abstract T load() throws IOException;

    @Override
    public final T get() {
        long now = System.nanoTime();
        if (now - checkedAt >= checkNanos) {
            synchronized (this) {
                if (now - checkedAt >= checkNanos) {
                    checkedAt = now;
                    reloadIfChanged();
                }
            }
        }
        return current;
    }

    private long stamp() throws IOException {
        long s = 0;
        for (Path f : files) {
            s = 31 * s + Files.getLastModifiedTime(f).toMillis() + Files.size(f);
        }
        return s;
    }

    private String describe() {
        return files.size() == 1 ? files.get(0).toString() : files.toString(); // paths only: never a password
    }

    private void reloadIfChanged() {
        if (files.isEmpty()) {
            return; // the JDK's own CAs, say
        }
        try {
            long s = stamp();
            if (s != stamp) {
                current = load();
                stamp = s;
                LOG.info("{}: reloaded {}", what, describe());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: keeping the previous material, {} could not be reloaded: {}", what, describe(),
                    e.getMessage());
        }
    }
}
