package io.gma.bench.scale;

import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Many thin uplinks from one thread (issue 22's load): K endpoints of one domain, each on a TCP connection of its
 * own to the domain's PC servlet, all driven by one NIO selector on one thread ({@code gma-bench-swarm}), so that
 * what the PC servlet spends per uplink can be measured with little spent on this side (an agent holds a
 * connection, a {@link io.gma.wire.StreamDecoder} and a few counters; reads go through one shared buffer).
 *
 * <p>Each agent does what an endpoint's uplink must (protocol.md section 4): HELLO with its registered name, waits
 * for WELCOME, answers every PING with a PONG, ACKs what the PC servlet sends it (ERRORs, say), and takes the
 * PC servlet's ACKs of what it sent. It does not register itself: {@link AgentRegistrations} registers the names
 * first, as the endpoints' {@code build()} would. Once open, {@link #publish} makes the first N agents send one
 * DATA each per period to one destination (another domain's consumer, through both PC servlets), spread evenly
 * over the period; the data is {@link #PAYLOAD_BYTES} bytes: the agent's number for it (1, 2, ...) and
 * {@link System#nanoTime()} when it was written (the consumer reads them: {@link LatencySink}). Nothing is sent
 * again: what the PC servlet did not acknowledge is counted ({@link Stats#unacknowledged}).
 *
 * <p>Connections are opened a bounded number at a time ({@code maxPending}, under the PC servlet's cap on
 * connections not yet authenticated per source address, 64 by default) from several loopback source addresses
 * ({@value #AGENTS_PER_SOURCE} agents each: 127.0.0.1, 127.0.0.2, ...), so that neither the ephemeral ports of
 * one address nor that cap limits K. A connection that fails before WELCOME (refused, reset, closed, no WELCOME
 * within {@value #HANDSHAKE_SECONDS} s) is tried again after {@value #RETRY_MILLIS} ms, up to
 * {@value #MAX_ATTEMPTS} attempts; an ERROR answered to HELLO is final. Agents whose uplink closes after it
 * opened are counted as dropped, with the reason, and not reopened. Thread-safe: every method hands its work
 * to the swarm's thread.
 */
public final class UplinkSwarm implements AutoCloseable {
    /** Handshakes under way at once, by default: under the PC servlet's 64 per source address. */
    public static final int DEFAULT_MAX_PENDING = 48;
    /** Bytes of data of each DATA: the sequence number, then the nanoTime it was written. */
    public static final int PAYLOAD_BYTES = 16;
    static final int AGENTS_PER_SOURCE = 4000;
    static final int HANDSHAKE_SECONDS = 10;
    static final int MAX_ATTEMPTS = 5;
    static final int RETRY_MILLIS = 200;
    private static final int CONNECTING = 1;
    private static final int HANDSHAKE = 2;
    private static final int OPEN = 3;
    private static final int RETRY = 4;
    private static final int GAVE_UP = 5;
    private static final int DROPPED = 6;
    private static final int CLOSED = 7;

    /** One endpoint of the swarm; touched by the swarm's thread only. */
    private static final class Agent {
        final String name;
        final InetAddress source;
        SocketChannel channel;
        SelectionKey key;
        StreamDecoder decoder;
        int state;
        int attempts;
        /** The handshake's deadline, or when to try again (nanoTime). */
        long deadline;
        /** What the socket did not take yet; null when nothing waits. */
        ArrayDeque<ByteBuffer> unwritten;
        /** Messages received that count for ACK (not ACK, PING, PONG, BYE), and the count last ACKed. */
        long received;
        long acknowledged;
        /** Sequence numbers of DATA sent (1, 2, ...), and the PC servlet's highest ACK of them. */
        long sequence;
        long peerAcked;

        Agent(String name, InetAddress source) {
            this.name = name;
            this.source = source;
        }
    }

    /**
     * A snapshot of the swarm's counters.
     *
     * @param agents the agents in all
     * @param open uplinks open now
     * @param pending connections being opened or awaiting WELCOME, or waiting to be tried again
     * @param gaveUp agents whose uplink never opened (after {@value #MAX_ATTEMPTS} attempts, or an ERROR to HELLO)
     * @param dropped uplinks that opened and then closed (the PC servlet closed them, or a read or write failed)
     * @param settled every agent has had its attempts: none pending
     * @param pongs PINGs answered
     * @param sent DATA messages sent
     * @param skipped DATA messages due from an agent whose uplink was not open (not sent)
     * @param unacknowledged sent and not covered by the PC servlet's ACKs
     * @param errors ERROR messages the PC servlet sent after WELCOME
     * @param maxLagMillis the most a DATA was written after its time in the schedule, milliseconds
     * @param reasons why connections failed or closed, with how many times each
     */
    public record Stats(int agents, int open, int pending, int gaveUp, int dropped, boolean settled, long pongs,
            long sent, long skipped, long unacknowledged, long errors, double maxLagMillis,
            Map<String, Integer> reasons) {
        /** The reasons in one line, most frequent first. */
        public String reasonsLine() {
            List<Map.Entry<String, Integer>> list = new ArrayList<>(reasons.entrySet());
            list.sort((a, b) -> b.getValue() - a.getValue());
            StringBuilder s = new StringBuilder();
            for (Map.Entry<String, Integer> e : list) {
                s.append(s.length() == 0 ? "" : "; ").append(e.getValue()).append(" x ").append(e.getKey());
            }
            return s.length() == 0 ? "none" : s.toString();
        }
    }

    private final InetSocketAddress uplink;
    private final Agent[] agents;
    private final int maxPending;
    private final Selector selector;
    private final WireCodec codec = WireCodec.standard();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(64 * 1024);
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final List<Agent> handshaking = new ArrayList<>();
    private final ArrayDeque<Agent> retries = new ArrayDeque<>();
    private final Map<String, Integer> reasons = new TreeMap<>();
    private volatile boolean closed;
    private volatile Throwable failure;
    private int nextToConnect;
    private int open;
    private int gaveUp;
    private int dropped;
    private long pongs;
    private long errors;
    private long sent;
    private long skipped;
    private long maxLagNanos;
    /**
     * Added to each agent's numbers on the wire: a swarm's agents take the names of an earlier swarm's, and the
     * consumer drops a (name, number) it already had (protocol.md section 4); numbering above every earlier run's,
     * as a restarted producer with an outbox does, keeps them new. The data carries the number from 1.
     */
    private final long sequenceBase = System.currentTimeMillis() << 16;
    /** The agent whose bytes the decoder is fed now. */
    private Agent current;
    /** Publishing: to whom (null: not publishing), how many agents, the period, its start, the sends made. */
    private String publishTo;
    private int publishers;
    private long periodNanos;
    private long publishStart;
    private long publishCursor;

    private UplinkSwarm(InetSocketAddress uplink, List<String> names, int maxPending) throws IOException {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending " + maxPending + " is under 1");
        }
        this.uplink = uplink;
        this.maxPending = maxPending;
        this.agents = new Agent[names.size()];
        byte[] base = InetAddress.getLoopbackAddress().getAddress();
        for (int i = 0; i < agents.length; i++) {
            byte[] source = base.length == 4 ? new byte[] {127, 0, 0, (byte) (1 + i / AGENTS_PER_SOURCE)} : base;
            agents[i] = new Agent(names.get(i), InetAddress.getByAddress(source));
        }
        this.selector = Selector.open();
        this.thread = new Thread(this::run, "gma-bench-swarm");
        thread.setDaemon(true);
    }

    /**
     * Starts opening one uplink per name to {@code uplink}, at most {@code maxPending} handshakes at once.
     *
     * @param names the agents' registered names, of the PC servlet's domain
     * @throws IOException if no selector can be opened
     */
    public static UplinkSwarm start(InetSocketAddress uplink, List<String> names, int maxPending) throws IOException {
        UplinkSwarm swarm = new UplinkSwarm(uplink, names, maxPending);
        swarm.thread.start();
        return swarm;
    }

    /** Names {@code agent-00001@domain} to {@code agent-NNNNN@domain}: the labels {@link #label} gives. */
    public static List<String> names(String domain, int from, int to) {
        List<String> names = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            names.add(label(i) + "@" + domain);
        }
        return names;
    }

    /** The label of agent {@code i} (from 0): {@code agent-00001}, ... */
    public static String label(int i) {
        return String.format("agent-%05d", i + 1);
    }

    /**
     * Waits until every agent's uplink opened or was given up, or until {@code timeout}, or until nothing changed
     * for {@code quiet} (no uplink opened, was given up or dropped: the PC servlet takes no more); the counters then.
     */
    public Stats awaitSettled(Duration timeout, Duration quiet) throws InterruptedException, IOException {
        long start = System.nanoTime();
        long changed = start;
        int seen = -1;
        while (true) {
            Stats s = stats();
            long now = System.nanoTime();
            int progress = s.open() + s.gaveUp() + s.dropped();
            if (progress != seen) {
                seen = progress;
                changed = now;
            }
            if (s.settled() || now - start > timeout.toNanos() || now - changed > quiet.toNanos()) {
                return s;
            }
            Thread.sleep(100);
        }
    }

    /**
     * From now on, agents 0 to {@code count - 1} each send one DATA to {@code to} per {@code period}, in turn
     * spread evenly over it; replaces what was asked before.
     */
    public void publish(String to, int count, Duration period) {
        if (count < 0 || count > agents.length) {
            throw new IllegalArgumentException("publishers " + count + " is not within 0.." + agents.length);
        }
        tasks.add(() -> {
            publishTo = to;
            publishers = count;
            periodNanos = period.toNanos();
            publishStart = System.nanoTime();
            publishCursor = 0;
        });
        selector.wakeup();
    }

    /** Stops publishing; what was sent is still acknowledged, counted in {@link #stats()}. */
    public void stopPublishing() {
        tasks.add(() -> publishTo = null);
        selector.wakeup();
    }

    /**
     * The counters, as the swarm's thread sees them.
     *
     * @throws IOException if the swarm's thread failed (the cause says how) or does not answer within 10 s
     */
    public Stats stats() throws IOException, InterruptedException {
        CompletableFuture<Stats> answer = new CompletableFuture<>();
        tasks.add(() -> answer.complete(snapshot()));
        selector.wakeup();
        try {
            return answer.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            Throwable why = failure != null ? failure : e;
            throw new IOException("the swarm's thread does not answer: " + why, why);
        }
    }

    private Stats snapshot() {
        long unacknowledged = 0;
        for (Agent a : agents) {
            unacknowledged += a.sequence - Math.min(a.sequence, a.peerAcked);
        }
        int pending = handshaking.size() + retries.size() + (agents.length - nextToConnect);
        return new Stats(agents.length, open, pending, gaveUp, dropped, pending == 0, pongs, sent, skipped,
                unacknowledged, errors, maxLagNanos / 1e6, Map.copyOf(reasons));
    }

    /** Closes every uplink (without BYE: an endpoint gone) and ends the swarm's thread, within 10 s. */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        selector.wakeup();
        thread.join(TimeUnit.SECONDS.toMillis(10));
    }

    // ---------------------------------------------------------------- the swarm's thread

    private void run() {
        try {
            while (!closed) {
                long now = System.nanoTime();
                connectMore(now);
                boolean busy = publishTo != null || !handshaking.isEmpty() || !retries.isEmpty();
                selector.select(busy ? 1 : 50);
                for (Runnable task; (task = tasks.poll()) != null;) {
                    task.run();
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    handle(key);
                }
                selector.selectedKeys().clear();
                now = System.nanoTime();
                expireHandshakes(now);
                publishDue(now);
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            for (Agent a : agents) {
                closeChannel(a);
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** Starts connections while fewer than maxPending are under way: retries first, when their time came. */
    private void connectMore(long now) {
        while (handshaking.size() < maxPending) {
            Agent a;
            if (!retries.isEmpty() && now - retries.peekFirst().deadline >= 0) {
                a = retries.pollFirst();
            } else if (nextToConnect < agents.length) {
                a = agents[nextToConnect++];
            } else {
                return;
            }
            connect(a, now);
        }
    }

    private void connect(Agent a, long now) {
        a.attempts++;
        a.received = 0;
        a.acknowledged = 0;
        a.peerAcked = 0;
        a.unwritten = null;
        a.decoder = codec.newStreamDecoder();
        a.deadline = now + TimeUnit.SECONDS.toNanos(HANDSHAKE_SECONDS);
        handshaking.add(a);
        try {
            a.channel = SocketChannel.open();
            a.channel.configureBlocking(false);
            a.channel.bind(new InetSocketAddress(a.source, 0));
            if (a.channel.connect(uplink)) {
                connected(a);
            } else {
                a.state = CONNECTING;
                a.key = a.channel.register(selector, SelectionKey.OP_CONNECT, a);
            }
        } catch (IOException e) {
            attemptFailed(a, "connect: " + e.getMessage());
        }
    }

    private void connected(Agent a) throws IOException {
        a.state = HANDSHAKE;
        if (a.key == null) {
            a.key = a.channel.register(selector, SelectionKey.OP_READ, a);
        } else {
            a.key.interestOps(SelectionKey.OP_READ);
        }
        write(a, Packed.make(0, Command.HELLO, a.name, "", new byte[0]));
    }

    private void handle(SelectionKey key) {
        Agent a = (Agent) key.attachment();
        try {
            if (!key.isValid()) {
                return;
            }
            if (key.isConnectable()) {
                a.channel.finishConnect();
                connected(a);
                return;
            }
            if (key.isWritable()) {
                flush(a);
            }
            if (key.isValid() && key.isReadable()) {
                read(a);
            }
        } catch (ProtocolException e) {
            lost(a, "undecodable: " + e.getMessage());
        } catch (IOException e) {
            lost(a, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
    }

    private void read(Agent a) throws IOException {
        readBuffer.clear();
        int n = a.channel.read(readBuffer);
        if (n < 0) {
            lost(a, a.state == OPEN ? "the PC servlet closed the uplink" : "closed before WELCOME");
            return;
        }
        readBuffer.flip();
        current = a;
        a.decoder.feed(readBuffer, this::take);
        current = null;
        if (a.state == OPEN && a.received > a.acknowledged) {
            // every read's messages at once: well within "every 64 messages or 20 ms"
            a.acknowledged = a.received;
            write(a, Packed.make(0, Command.ACK, a.name, "", ByteBuffer.allocate(8).putLong(a.received).array()));
        }
    }

    /** One message from the PC servlet, for {@link #current}. */
    private void take(Message m) {
        Agent a = current;
        if (a.state != HANDSHAKE && a.state != OPEN) {
            return; // closed within this read
        }
        Command c = m.command();
        if (c == Command.WELCOME) {
            if (a.state == HANDSHAKE) {
                a.state = OPEN;
                handshaking.remove(a);
                open++;
            }
        } else if (c == Command.PING) {
            pongs++;
            write(a, Packed.make(m.sequence(), Command.PONG, a.name, m.from(), m.data()));
        } else if (c == Command.ACK) {
            a.peerAcked = Math.max(a.peerAcked, m.dataLength() == 8 ? m.dataBuffer().getLong() : 0);
        } else if (c == Command.BYE) {
            lost(a, "BYE from the PC servlet");
        } else if (c == Command.ERROR && a.state == HANDSHAKE) {
            a.attempts = MAX_ATTEMPTS; // refused: final
            attemptFailed(a, "ERROR to HELLO: " + errorCode(m));
        } else if (c != Command.PONG) { // a PONG answers nothing asked: ignored
            if (c == Command.ERROR) {
                errors++;
                count("ERROR after WELCOME: " + errorCode(m));
            }
            a.received++;
        }
    }

    /** An ERROR's code and its sentence's first words, without the names that differ per agent. */
    private static String errorCode(Message m) {
        String text = m.dataAsString();
        return text.length() > 60 ? text.substring(0, 60) + "..." : text;
    }

    private void write(Agent a, byte[] bytes) {
        if (a.channel == null || !a.channel.isOpen()) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            if (a.unwritten == null) {
                a.channel.write(b);
                if (!b.hasRemaining()) {
                    return;
                }
                a.unwritten = new ArrayDeque<>();
                a.key.interestOps(a.key.interestOps() | SelectionKey.OP_WRITE);
            }
            a.unwritten.add(b);
        } catch (IOException e) {
            lost(a, "write: " + e.getMessage());
        }
    }

    private void flush(Agent a) throws IOException {
        while (a.unwritten != null && !a.unwritten.isEmpty()) {
            ByteBuffer b = a.unwritten.peekFirst();
            a.channel.write(b);
            if (b.hasRemaining()) {
                return;
            }
            a.unwritten.pollFirst();
        }
        a.unwritten = null;
        a.key.interestOps(SelectionKey.OP_READ);
    }

    private void expireHandshakes(long now) {
        for (int i = handshaking.size() - 1; i >= 0; i--) {
            Agent a = handshaking.get(i);
            if (now - a.deadline > 0) {
                attemptFailed(a, "no WELCOME within " + HANDSHAKE_SECONDS + " s");
            }
        }
    }

    /** Sends what the schedule says is due: send k of the period goes at start + k x period / publishers. */
    private void publishDue(long now) {
        if (publishTo == null || publishers == 0) {
            return;
        }
        long due = (now - publishStart) / Math.max(1, periodNanos / publishers);
        for (; publishCursor < due; publishCursor++) {
            Agent a = agents[(int) (publishCursor % publishers)];
            if (a.state != OPEN) {
                skipped++;
                continue;
            }
            long lag = now - publishStart - publishCursor * (periodNanos / publishers);
            maxLagNanos = Math.max(maxLagNanos, lag);
            long seq = ++a.sequence;
            byte[] data = ByteBuffer.allocate(PAYLOAD_BYTES).putLong(seq).putLong(System.nanoTime()).array();
            write(a, Packed.make(sequenceBase + seq, Command.DATA, a.name, publishTo, data));
            sent++;
        }
    }

    /** A connection that did not open: tried again later, or given up after the last attempt. */
    private void attemptFailed(Agent a, String reason) {
        handshaking.remove(a);
        closeChannel(a);
        count(reason);
        if (a.attempts < MAX_ATTEMPTS) {
            a.state = RETRY;
            a.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
            retries.addLast(a);
        } else {
            a.state = GAVE_UP;
            gaveUp++;
        }
    }

    /** A connection that failed: before WELCOME an attempt that failed, after it a dropped uplink. */
    private void lost(Agent a, String reason) {
        if (a.state == OPEN) {
            open--;
            dropped++;
            a.state = DROPPED;
            closeChannel(a);
            count(reason);
        } else if (a.state == CONNECTING || a.state == HANDSHAKE) {
            attemptFailed(a, reason);
        }
    }

    private void count(String reason) {
        reasons.merge(reason, 1, Integer::sum);
    }

    private void closeChannel(Agent a) {
        if (a.channel != null) {
            try {
                a.channel.close(); // cancels its key
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        a.key = null;
        if (a.state == OPEN && closed) {
            a.state = CLOSED;
        }
    }
}
