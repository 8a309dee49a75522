package io.gma.internal.link;

import com.sun.management.UnixOperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's open-file limit, as one accept loop meets it. "Too many open files" (EMFILE, or ENFILE for the
 * whole system) is logged once as it begins, at ERROR, with the limit and what to raise, and once as it ends;
 * in between the loop pauses and tries again, quietly, so that the process goes on serving the links it has and
 * takes new ones as soon as descriptors are free. The connections that wait meanwhile stay in the listen backlog.
 * A limit met again within {@link #QUIET_NANOS} of the last report (the backlog taking the descriptors that
 * closing links free, say) is counted, not logged: the next report says how often.
 *
 * <p>Saying how many files are open takes a descriptor (the JVM counts the entries of /proc/self/fd), and so did
 * loading the management library the first time: so the library is loaded as the loop starts, and one descriptor
 * is kept in reserve (/dev/null), let go for the count and taken again after (the reserve trick of libev and
 * nginx).
 *
 * <p>The accept loop's thread only.
 */
final class OpenFileLimit {
    private static final Logger LOG = LoggerFactory.getLogger(OpenFileLimit.class);

    private final String owner;
    private final LinkLimit links;
    /** After a report, the limit met again within this long is not reported again. */
    static final long QUIET_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** Accepts failed for want of descriptors since it began; 0: it has not. */
    private long failures;
    /** When the last exhaustion was reported (System.nanoTime), and whether the present one was. */
    private long reportedAt;
    private boolean reported;
    /** Exhaustions met and not reported since the last report. */
    private long unreported;
    private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    /** A descriptor held in reserve, for the count; null where there is no /dev/null, or while it is let go. */
    private FileChannel reserve;

    /**
     * @param owner who accepts, as its logs name it
     * @param links its link limit, named in the advice
     */
    OpenFileLimit(String owner, LinkLimit links) {
        this.owner = owner;
        this.links = links;
        this.reserve = openReserve();
    }

    private static FileChannel openReserve() {
        Path devNull = Path.of("/dev/null");
        if (!Files.exists(devNull)) {
            return null;
        }
        try {
            return FileChannel.open(devNull, StandardOpenOption.READ);
        } catch (IOException e) {
            return null; // out of descriptors already: the next count tries again
        }
    }

    /** Whether {@code e} says that the process, or the system, has no file descriptor left. */
    static boolean isExhaustion(IOException e) {
        String text = e.getMessage();
        return text != null && text.contains("Too many open files");
    }

    /** An accept failed with {@code e}, which {@link #isExhaustion} said is this: logged if it is the first. */
    void exhausted(IOException e) {
        if (failures++ > 0) {
            return;
        }
        long now = System.nanoTime();
        reported = reportedAt == 0 || now - reportedAt >= QUIET_NANOS;
        if (!reported) {
            unreported++;
            return;
        }
        reportedAt = now;
        LOG.error("{}: out of file descriptors ({}): {}{}; new connections wait until some close, the links open go"
                + " on. Raise the open-file limit (ulimit -n in the shell that starts it, LimitNOFILE= in a systemd"
                + " unit) to more than maxLinks (now {}: --max-links, or the builders' maxLinks) plus a few hundred for"
                + " the JVM, or lower maxLinks below it. Logged once, until accepting works again, and once a minute"
                + " at most", owner, e.getMessage(), usage(), unreported == 0 ? "" : " (and " + unreported
                        + " times since the last report)", links.max());
        unreported = 0;
    }

    /** An accept worked: if descriptors had run out, and that was reported, the end is said, once. */
    void accepted() {
        if (failures > 0) {
            if (reported) {
                LOG.info("{}: accepting again, after {} accepts failed for want of file descriptors ({})", owner,
                        failures, usage());
            }
            failures = 0;
        }
    }

    /**
     * "1021 of 1024 files open, the process's limit", or what can be said where the JVM does not tell; counted
     * with the reserve let go, so the count includes it.
     */
    private String usage() {
        if (reserve != null) {
            try {
                reserve.close();
            } catch (IOException ignored) {
                // it is let go all the same
            }
        }
        try {
            if (os instanceof UnixOperatingSystemMXBean unix) {
                long open;
                try {
                    open = unix.getOpenFileDescriptorCount();
                } catch (InternalError | RuntimeException noneLeft) {
                    // the count opens /proc/self/fd, and another thread may have taken the reserve's descriptor
                    // first: the JDK then throws an InternalError, which ended the accepting thread
                    open = -1;
                }
                return (open < 0 ? "all" : String.valueOf(open)) + " of " + unix.getMaxFileDescriptorCount()
                        + " files open, the process's limit";
            }
            return "the process's open-file limit is reached";
        } finally {
            reserve = openReserve();
        }
    }
}
