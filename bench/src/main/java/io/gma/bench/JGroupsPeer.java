package io.gma.bench;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.Version;
import org.jgroups.protocols.UFC;
import org.jgroups.protocols.UNICAST3;

/**
 * JGroups as a peer: two members of one cluster in this JVM, each a channel with JGroups' own TCP stack
 * ({@code tcp.xml} of the jar, as below), talking by unicast over loopback. Ping-pong: member A sends to B, whose
 * receiver sends the bytes back. Throughput: A sends flat out to B, which counts; UNICAST3 makes delivery
 * reliable and ordered, UFC bounds what is in flight.
 *
 * <p>Departures from {@code tcp.xml}, each for this benchmark: bind to 127.0.0.1 on an ephemeral port (no
 * port_range to probe), discovery by LOCAL_PING (members in the same process) instead of TCPPING with fixed
 * ports, TCP_NODELAY on (as every other transport here), no diagnostics listener, FD_SOCK2 left out (it opens
 * more listening sockets; nothing fails here), STATE_TRANSFER left out (no state), GMS quiet. And one that makes
 * it run cleanly: the bundler holds 64k messages, not 16k. UFC lets 2 MB be in flight, 32k messages of 64 B;
 * a 16k bundler drops the rest when full, and UNICAST3 resends them only after its 500 ms retransmit interval,
 * so 64 B streams crawled at 50 k messages/s with dozens of resends. {@link #health} counts them.
 */
final class JGroupsPeer implements AutoCloseable {
    private static final String STACK = """
            <config xmlns="urn:org:jgroups">
                <TCP bind_addr="127.0.0.1" bind_port="0" port_range="0" recv_buf_size="0" send_buf_size="0"
                     buffered_input_stream_size="65536" buffered_output_stream_size="65536"
                     sock_conn_timeout="300ms" tcp_nodelay="true"
                     bundler_type="pd" bundler.max_size="64K" bundler.capacity="64k"
                     diag.enabled="false" thread_pool.min_threads="0" thread_pool.max_threads="200"
                     thread_pool.keep_alive_time="60s"/>
                <LOCAL_PING/>
                <MERGE3 min_interval="10s" max_interval="30s"/>
                <FD_ALL3 timeout="40s" interval="5s"/>
                <VERIFY_SUSPECT2 timeout="1.5s"/>
                <BARRIER/>
                <pbcast.NAKACK2 use_mcast_xmit="false"/>
                <UNICAST3/>
                <pbcast.STABLE desired_avg_gossip="50s" max_bytes="4M"/>
                <pbcast.GMS print_local_addr="false" join_timeout="2s"/>
                <MFC max_credits="2M" min_threshold="0.4"/>
                <UFC max_credits="2M" min_threshold="0.4"/>
                <FRAG2 frag_size="60K"/>
            </config>
            """;

    private final JChannel a;
    private final JChannel b;
    private final BlockingQueue<Message> echoes = new ArrayBlockingQueue<>(16);
    private volatile Counting counting;

    /** B counts the messages of a stream instead of echoing them. */
    private record Counting(long target, AtomicLong received, CountDownLatch done) {
    }

    private JGroupsPeer() throws Exception {
        Logger.getLogger("org.jgroups").setLevel(Level.WARNING); // its INFO lines would break the progress bars
        String cluster = "gma-bench-" + UUID.randomUUID();
        a = channel();
        b = channel();
        try {
            a.setReceiver(new Receiver() {
                @Override
                public void receive(Message m) {
                    echoes.add(m);
                }
            });
            b.setReceiver(new Receiver() {
                @Override
                public void receive(Message m) {
                    Counting c = counting;
                    if (c == null) {
                        try {
                            b.send(new BytesMessage(m.getSrc(), m.getArray(), m.getOffset(), m.getLength()));
                        } catch (Exception e) {
                            throw new IllegalStateException("jgroups echo: " + e.getMessage(), e);
                        }
                    } else if (c.received.incrementAndGet() == c.target) {
                        c.done.countDown();
                    }
                }
            });
            a.connect(cluster);
            b.connect(cluster);
            if (a.getView().size() != 2) {
                throw new IOException("jgroups: the two members did not form one cluster: " + a.getView());
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** Starts the two members and waits until they see each other. */
    static JGroupsPeer start() throws Exception {
        return new JGroupsPeer();
    }

    /**
     * What slowed the members down so far, for the summary: messages UNICAST3 had to send again (0 in a clean
     * run) and how often UFC made a sender wait for credits, and for how long on average.
     */
    String health() {
        UFC ufcA = a.getProtocolStack().findProtocol(UFC.class);
        UFC ufcB = b.getProtocolStack().findProtocol(UFC.class);
        int blockings = ufcA.getNumberOfBlockings() + ufcB.getNumberOfBlockings();
        double blockedMillis = ufcA.getAverageTimeBlocked() * ufcA.getNumberOfBlockings()
                + ufcB.getAverageTimeBlocked() * ufcB.getNumberOfBlockings();
        long resent = a.getProtocolStack().<UNICAST3>findProtocol(UNICAST3.class).getNumXmits()
                + b.getProtocolStack().<UNICAST3>findProtocol(UNICAST3.class).getNumXmits();
        return String.format(Locale.ROOT, "UNICAST3 resent %d messages; UFC made a sender wait for credits %d times,"
                + " %.2f ms on average", resent, blockings, blockings == 0 ? 0 : blockedMillis / blockings);
    }

    String version() {
        return "JGroups " + Version.printVersion() + ", TCP stack";
    }

    Peer unicast() {
        return new Peer(Peers.JGROUPS, this::roundTrips, this::stream);
    }

    private static JChannel channel() throws Exception {
        return new JChannel(new ByteArrayInputStream(STACK.getBytes(StandardCharsets.UTF_8)));
    }

    private long[] roundTrips(int size, int n) throws Exception {
        byte[] payload = new byte[size];
        long[] rtt = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            a.send(new BytesMessage(b.getAddress(), payload));
            Message back = echoes.poll(30, TimeUnit.SECONDS);
            if (back == null || back.getLength() != size) {
                throw new IOException("jgroups: no echo of " + size + " bytes within 30 s");
            }
            rtt[i] = System.nanoTime() - start;
        }
        return rtt;
    }

    private double stream(int size, int n) throws Exception {
        Counting c = new Counting(n, new AtomicLong(), new CountDownLatch(1));
        counting = c;
        try {
            byte[] payload = new byte[size];
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                a.send(new BytesMessage(b.getAddress(), payload));
            }
            if (!c.done.await(5, TimeUnit.MINUTES)) {
                throw new IOException("jgroups: only " + c.received.get() + " of " + n + " messages of " + size
                        + " bytes arrived in 5 minutes");
            }
            return (System.nanoTime() - start) / 1e9;
        } finally {
            counting = null;
        }
    }

    @Override
    public void close() {
        if (b != null) {
            b.close();
        }
        if (a != null) {
            a.close();
        }
    }
}
