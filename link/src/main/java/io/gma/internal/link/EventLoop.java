package io.gma.internal.link;

import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector and the thread that serves it: every link of its {@link IoThreads} group that was given to it,
 * read, written and timed on that one thread (issue 22: threads scale with cores, not with links).
 *
 * <pre>
 *   loop: select (until the earliest deadline of its links, or woken)
 *         register the links that arrived
 *         each link that asked: its tasks, and the write its senders left to the loop (one linger for all)
 *         each ready key: read (handlers run here), or write what the socket now takes
 *         timers: the ACKs due, the handshakes and goodbyes past their deadline (each a queue in deadline
 *                 order, so a loop of 10,000 links does not look at them all for each); and, a few times a
 *                 ping interval, every link (PING, a silent peer)
 * </pre>
 *
 * <p><b>A handler that holds the thread</b> would hold every other link of the loop. So the loop changes thread
 * instead (as Go's scheduler hands a processor on when a goroutine blocks in a system call): when one message of
 * a link's read has held the thread for {@link #HANDOFF_NANOS} ({@link StallGuard} looks), that link is marked
 * held, its key stops asking for reads, and another thread (a spare, or a new one) takes the loop on; the held
 * thread finishes that one read, gives the link back to the loop ({@link #release}) and becomes a spare. The held
 * link's ACKs and PINGs are the guard's meanwhile, as before. Each thread reads into a buffer of its own, so the
 * two never share one.
 *
 * <p>Threads: {@link #owner} runs the loop; any thread may {@link #add} a link, {@link #schedule} one (tasks, a
 * write, a close) or {@link #wakeup} the loop. Everything else is the owner's.
 */
final class EventLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(EventLoop.class);
    /**
     * How long a link's read may hold the loop's thread before the loop moves to another: long enough that a
     * handler of a few milliseconds never costs a thread, short enough that the other links' ACKs (due within 20
     * ms) and PINGs stay on time.
     */
    static final long HANDOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Every link's timers are looked at this often at most, and at least every 16th of a ping interval. */
    private static final long MAX_SCAN_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MIN_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * A loop told to close ends once its links have closed (saying goodbye takes {@link Link#BYE_DRAIN_MILLIS}),
     * or after this long, closing those left.
     */
    static final long CLOSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final IoThreads group;
    private final int index;
    private final Selector selector;
    private final Queue<Link> arrived = new ConcurrentLinkedQueue<>();
    /** Links with tasks, a write request or a close for the loop; each queued once until the loop takes it. */
    private final Queue<Link> asked = new ConcurrentLinkedQueue<>();
    /**
     * The links the loop serves: added and removed by the owner, read by the {@link StallGuard}'s thread too;
     * and the links held by a handler.
     */
    private final Set<Link> members = ConcurrentHashMap.newKeySet();
    private final Set<Link> held = ConcurrentHashMap.newKeySet();
    /**
     * Deadlines, each queue in the order they fall due (each kind has one length, so the order links join in):
     * links with something not acknowledged, links in their handshake, links saying goodbye. The owner's.
     */
    private final ArrayDeque<Link> acksDue = new ArrayDeque<>();
    private final ArrayDeque<Link> handshakes = new ArrayDeque<>();
    private final List<Link> closing = new ArrayList<>();
    /** When every link's timers are next looked at, and how often: a 16th of the shortest ping interval. */
    private long nextScan;
    private long scanNanos = MAX_SCAN_NANOS;
    /** Since when the owner has been busy (out of select), or 0 while it selects. For the {@link StallGuard}. */
    private volatile long busySince;
    /** The thread running the loop now. */
    private volatile Thread owner;
    /** The owner is in, or about to enter, select: a request must wake it. */
    private volatile boolean selecting;
    /** The link the owner is reading, and since when; null between reads. For the {@link StallGuard}. */
    private volatile Link reading;
    private volatile long readingSince;
    /** What the guard saw of the read last time: the link, how far its reader was, and when it saw that move. */
    private Link guardSaw;
    private int guardSawProgress;
    private long guardSawAt;
    private volatile boolean closed;
    /** When a closed loop ends whatever is left (System.nanoTime); set with closed. */
    private volatile long closeBy;
    /**
     * Why the loop ended: SHUTTING_DOWN when its group closed it, INTERNAL when it failed; null while it runs. A
     * link that arrives after it is set ends at once, its listener told, as nobody would serve it.
     */
    private volatile LinkException ended;

    EventLoop(IoThreads group, int index) throws IOException {
        this.group = group;
        this.index = index;
        this.selector = Selector.open();
    }

    /** Whether the calling thread runs this loop now. */
    boolean inLoop() {
        return Thread.currentThread() == owner;
    }

    /** Starts the loop on a thread of the group. */
    void start() {
        owner = group.newThread(this);
        StallGuard.watch(this);
        owner.start();
    }

    /** Serves {@code link} from now on, from any thread; ends it at once if the loop has ended. */
    void add(Link link) {
        arrived.add(link);
        LinkException why = ended;
        if (why != null) {
            endArrived(why); // the loop's thread is gone, or going: it would never take the link
        } else {
            wakeup();
        }
    }

    /** Whether the loop has ended (closed, or failed): its group makes a new one for the next link. */
    boolean ended() {
        return ended != null;
    }

    /** {@code link} has something for the loop (tasks, a write, a close); it queues itself once. */
    void schedule(Link link) {
        asked.add(link);
        wakeup();
    }

    /** Wakes the loop if it may be blocked in select. */
    void wakeup() {
        if (selecting) {
            selector.wakeup();
        }
    }

    /** The selector the loop's links register with. */
    Selector selector() {
        return selector;
    }

    /**
     * Ends the loop once its links have closed, or after {@link #CLOSE_NANOS} at most, closing those left (their
     * listeners are told). It takes no link from now on.
     */
    void close() {
        closeBy = System.nanoTime() + CLOSE_NANOS;
        closed = true;
        selector.wakeup();
    }

    @Override
    public void run() {
        Thread me = Thread.currentThread();
        List<SelectionKey> ready = new ArrayList<>();
        List<Link> toWrite = new ArrayList<>();
        try {
            while (owner == me) {
                if (closed && (members.isEmpty() && arrived.isEmpty() || System.nanoTime() - closeBy >= 0)) {
                    closeAll(new LinkException(ErrorCode.SHUTTING_DOWN, group.prefix() + index + " is closing"));
                    return;
                }
                select();
                registerArrived();
                ready.addAll(selector.selectedKeys());
                selector.selectedKeys().clear();
                serveAsked(toWrite);
                for (int i = 0; i < ready.size(); i++) {
                    serveReady(ready.get(i), me);
                    if (owner != me) {
                        return; // held by a handler: another thread has the loop; serveReady gave the link back
                    }
                }
                ready.clear();
                timers(System.nanoTime());
            }
        } catch (IOException | RuntimeException | Error e) {
            // out of memory, say, or a selector that broke: its links end (their owners connect again, to a new
            // loop that the group makes for the next link), the process and the other loops go on
            LOG.error("{}: event loop {} failed; its links close, and the next link gets a new loop",
                    group.prefix(), index, e);
            closed = true;
            closeAll(new LinkException(ErrorCode.INTERNAL, "event loop " + group.prefix() + index + " failed: " + e,
                    e));
        }
    }

    private void select() throws IOException {
        busySince = 0;
        selecting = true;
        if (!arrived.isEmpty() || !asked.isEmpty()) {
            selector.selectNow();
        } else {
            long wait = nextDeadline() - System.nanoTime();
            selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait + 999_999)));
        }
        selecting = false;
        busySince = System.nanoTime() | 1; // never 0 while busy
    }

    /** The earliest of the next scan and the heads of the deadline queues. */
    private long nextDeadline() {
        long next = nextScan;
        Link ack = acksDue.peekFirst();
        if (ack != null) {
            next = Math.min(next, ack.queuedDeadline);
        }
        Link hs = handshakes.peekFirst();
        if (hs != null) {
            next = Math.min(next, hs.handshakeDeadline());
        }
        for (Link link : closing) {
            next = Math.min(next, link.nextDeadline());
        }
        return closed ? Math.min(next, closeBy) : next;
    }

    private void registerArrived() {
        for (Link link; (link = arrived.poll()) != null;) {
            members.add(link);
            scanNanos = Math.max(MIN_SCAN_NANOS, Math.min(scanNanos, link.pingNanos() / 16));
            link.started(this);
            if (!link.isDone()) {
                handshakes.addLast(link);
            }
            afterStep(link);
        }
    }

    /**
     * The links that asked: tasks first, then the writes their senders left to the loop, after one linger for
     * more of their streams unless every one of them has a full batch waiting.
     */
    private void serveAsked(List<Link> toWrite) {
        boolean linger = false;
        for (Link link; (link = asked.poll()) != null;) {
            link.unscheduled();
            if (link.isDone()) {
                continue;
            }
            if (link.isHeld()) {
                // its tasks wait for its release, but writing is anyone's, under the writer's lock: what its senders
                // left to the loop goes now, not when the handler that holds it returns
                if (link.writeRequested()) {
                    link.flush();
                }
                continue;
            }
            link.runTasks();
            if (link.writeRequested()) {
                linger |= !link.batchFull();
                toWrite.add(link);
            }
            afterStep(link);
        }
        if (toWrite.isEmpty()) {
            return;
        }
        if (linger) {
            LockSupport.parkNanos(LinkWriter.COALESCE_NANOS); // more sends of the streams join the batches
        }
        for (Link link : toWrite) {
            link.writeBatch();
            afterStep(link);
        }
        toWrite.clear();
    }

    private void serveReady(SelectionKey key, Thread me) {
        Link link = (Link) key.attachment();
        if (link == null || link.isDone()) {
            return;
        }
        if (link.isHeld()) {
            link.writeIfWritable(key); // writing is anyone's, under the writer's lock; reading is the holder's
            return;
        }
        readingSince = System.nanoTime();
        reading = link;
        link.ready(key);
        boolean handedOn;
        synchronized (this) { // against checkHeld: either the read is over, or the loop was handed on
            reading = null;
            handedOn = owner != me;
        }
        if (handedOn) {
            release(link);
            return;
        }
        afterStep(link);
    }

    /**
     * After the loop did something for {@code link}: a closed link leaves; one that took something it has not
     * acknowledged joins the ACK queue, one that says goodbye the closing ones.
     */
    private void afterStep(Link link) {
        if (link.isDone()) {
            forget(link);
            return;
        }
        if (!link.ackQueued && !link.isHeld() && link.unacknowledged()) {
            link.ackQueued = true;
            link.queuedDeadline = link.ackDeadline();
            acksDue.addLast(link);
        }
        if (!link.closingQueued && link.closing()) {
            link.closingQueued = true;
            closing.add(link);
        }
    }

    /** A closed link leaves the loop (the deadline queues drop it as they come to it). */
    private void forget(Link link) {
        members.remove(link);
    }

    /**
     * The timers due at {@code now}: the heads of the deadline queues, as far as they are due; and, every
     * {@link #scanNanos}, every link (PING, a silent peer).
     */
    private void timers(long now) {
        // those queued again in this pass (one whose ACK could not go yet) wait for the next
        for (int n = acksDue.size(); n > 0; n--) {
            Link link = acksDue.peekFirst();
            if (!link.isDone() && link.unacknowledged() && now - link.queuedDeadline < 0) {
                break; // the first one not due: those after it were queued later
            }
            acksDue.pollFirst();
            link.ackQueued = false;
            if (!link.isDone() && !link.isHeld()) {
                link.timers();
            }
            afterStep(link); // not acknowledged yet (a new first message, say): queued again, at its deadline
        }
        while (!handshakes.isEmpty()) {
            Link link = handshakes.peekFirst();
            if (!link.isDone() && link.handshaking() && now - link.handshakeDeadline() < 0) {
                break;
            }
            handshakes.pollFirst();
            if (!link.isDone() && link.handshaking()) {
                link.timers();
                afterStep(link);
            }
        }
        for (int i = closing.size() - 1; i >= 0; i--) {
            Link link = closing.get(i);
            if (!link.isDone() && now - link.nextDeadline() >= 0) {
                link.timers();
            }
            if (link.isDone() || !link.closing()) {
                closing.remove(i);
                link.closingQueued = false;
                afterStep(link);
            }
        }
        if (now - nextScan >= 0) {
            for (Link link : members) {
                if (!link.isHeld() && !link.isDone()) {
                    link.timers();
                }
                afterStep(link);
            }
            nextScan = now + scanNanos;
        }
    }

    /**
     * On the {@link StallGuard}'s thread, at {@code now}: the loop's links while it has been busy for longer than
     * the guard's grace, and those held by a handler, get the ACKs and PINGs they are due; and a loop held by one
     * message of a link's read for {@link #HANDOFF_NANOS} goes on on another thread.
     */
    void guard(long now) {
        checkHeld(now);
        long since = busySince;
        if (since != 0 && now - since > StallGuard.GRACE_NANOS) {
            for (Link link : members) {
                guard(link, now);
            }
        }
        for (Link link : held) {
            guard(link, now);
        }
    }

    private static void guard(Link link, long now) {
        try {
            link.guard(now);
        } catch (RuntimeException e) {
            // one link's trouble is its own: the link fails on its loop, the guard goes on
            link.fail(new LinkException(ErrorCode.INTERNAL, "guarding the link to " + link.peerName() + " failed: "
                    + e, e));
        }
    }

    /**
     * If one message of a link's read has held the owner for {@link #HANDOFF_NANOS} (a handler, a look-up in a
     * handshake), the loop goes on on another thread. A long read of many quick messages is not held: the guard
     * sees its messages go by ({@link Link#progress}), and measures from the last one it saw go.
     */
    private void checkHeld(long now) {
        Link link = reading;
        if (link == null || closed) {
            guardSaw = null;
            return;
        }
        int progress = link.progress();
        if (link != guardSaw || progress != guardSawProgress) {
            guardSaw = link;
            guardSawProgress = progress;
            guardSawAt = Math.max(now, readingSince);
            return;
        }
        if (now - Math.max(guardSawAt, readingSince) < HANDOFF_NANOS) {
            return;
        }
        synchronized (this) {
            if (reading != link) {
                return; // it came back meanwhile
            }
            reading = null;
            held.add(link);
            link.hold();
            group.handOff(this);
        }
    }

    /** The guard: the loop's next owner is {@code thread}, about to run it. */
    void ownedBy(Thread thread) {
        owner = thread;
        selector.wakeup(); // the old owner may never select again: the new one must not wait on its account
    }

    /** On the old owner, its handler done: the link it held goes back to the loop, then the thread to the spares. */
    private void release(Link link) {
        link.unhold();
        held.remove(link);
        link.schedule(); // its tasks and writes, left while it was held
    }

    /** On the loop's thread, as it ends: every link it has ends, {@code why}, and the selector closes. */
    private void closeAll(LinkException why) {
        ended = why;
        StallGuard.release(this);
        for (Link link : members) {
            link.loopClosed(why);
        }
        members.clear();
        endArrived(why);
        try {
            selector.close();
        } catch (IOException e) {
            LOG.warn("{}: closing the selector of event loop {} failed: {}", group.prefix(), index, e.toString());
        }
    }

    /**
     * Ends the links that arrived and were not taken, on the calling thread (the loop's, or an adder's that came
     * after the end): aborted when the group closed (its owner is closing too), told {@code why} when the loop
     * failed (their owners connect again).
     */
    private void endArrived(LinkException why) {
        for (Link link; (link = arrived.poll()) != null;) {
            if (why.code() == ErrorCode.SHUTTING_DOWN) {
                link.abort();
            } else {
                link.loopClosed(why);
            }
        }
    }
}
