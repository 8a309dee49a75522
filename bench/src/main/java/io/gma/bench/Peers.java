package io.gma.bench;

import io.gma.bench.pingpong.PingPongBench;
import io.gma.bench.streaming.StreamingBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything the ping-pong and streaming stages measure, started once for the run and stopped at its end, all on
 * loopback: a registry with GMA's {@code Pong} and {@code Ping} (the examples) over a direct TCP link, the raw
 * socket echo, and the peers that can run here, NATS and JGroups. A peer that cannot start is recorded with the
 * reason in one line and left out of the figures; the run goes on.
 */
final class Peers implements AutoCloseable {
    static final String RAW = "raw sockets";
    static final String GMA_BLOCKING = "GMA direct, blocking (request/reply)";
    static final String GMA_NONBLOCKING = "GMA direct, non-blocking (send/send)";
    static final String GMA_DIRECT = "GMA direct";
    static final String NATS_REQUEST = "NATS request/reply";
    static final String NATS_PUBSUB = "NATS publish/subscribe";
    static final String JGROUPS = "JGroups unicast";
    static final String RAW_POST = "raw HTTP POST (Jetty 12 + OkHttp)";
    static final String RAW_POST_BODIES = "raw HTTP POST, 1 MiB bodies";
    static final String GMA_CROSS = "GMA cross-domain (two PC servlets)";

    /** The peers one can leave out with {@code --skip}. */
    static final Set<String> SKIPPABLE = Set.of("nats", "jgroups");

    final Registry registry;
    private final Producer pong;
    private final Ping ping;
    private final PingPongBench.RawEcho raw;
    private NatsPeer nats;
    private JGroupsPeer jgroups;
    /** Peer, and what ran ("nats-server v2.9.10, jnats 2.21.1") or why it did not ("skipped: ..."). */
    private final Map<String, String> status = new LinkedHashMap<>();

    private Peers(Set<String> skip, Path natsServer, Progress progress) throws Exception {
        registry = Registry.builder().port(0).build().start();
        Producer pongStarted = null;
        Ping pingStarted = null;
        try {
            pongStarted = Pong.start(registry.url(), "lan", "pong");
            pingStarted = Ping.start(registry.url(), "lan");
            raw = new PingPongBench.RawEcho();
        } catch (Exception e) {
            if (pingStarted != null) {
                pingStarted.close();
            }
            if (pongStarted != null) {
                pongStarted.close();
            }
            registry.close();
            throw e;
        }
        pong = pongStarted;
        ping = pingStarted;
        status.put("GMA", "this build, direct TCP link, one JVM");
        if (skip.contains("nats")) {
            status.put("NATS", "skipped: --skip nats");
        } else {
            try {
                nats = NatsPeer.start(natsServer);
                status.put("NATS", nats.version() + ", server in its own process");
            } catch (Exception e) {
                status.put("NATS", "skipped: " + e.getMessage());
            }
        }
        if (skip.contains("jgroups")) {
            status.put("JGroups", "skipped: --skip jgroups");
        } else {
            try {
                jgroups = JGroupsPeer.start();
                status.put("JGroups", jgroups.version() + ", two members in this JVM");
            } catch (Exception e) {
                status.put("JGroups", "skipped: " + e.getMessage());
            }
        }
        status.forEach((peer, what) -> progress.say(peer + ": " + what));
    }

    /** Starts what the stages measure; NATS and JGroups unless skipped or unable to start. */
    static Peers start(Set<String> skip, Path natsServer, Progress progress) throws Exception {
        return new Peers(skip, natsServer, progress);
    }

    /** Each peer and what ran or why it did not; JGroups with its resends and waits for credits so far. */
    Map<String, String> status() {
        Map<String, String> now = new LinkedHashMap<>(status);
        if (jgroups != null) {
            now.put("JGroups", status.get("JGroups") + "; in the run: " + jgroups.health());
        }
        return now;
    }

    /** Raw sockets, GMA blocking and non-blocking, and the peers that started: the ping-pong series. */
    List<Peer> roundTrippers() {
        List<Peer> peers = new ArrayList<>(List.of(new Peer(RAW, raw::run, null), direct(GMA_BLOCKING, true),
                direct(GMA_NONBLOCKING, false)));
        if (nats != null) {
            peers.add(nats.requestReply());
        }
        if (jgroups != null) {
            peers.add(jgroups.unicast());
        }
        return peers;
    }

    /** Raw sockets, GMA and the peers that started: the streaming series. */
    List<Peer> streamers() {
        List<Peer> peers = new ArrayList<>(List.of(new Peer(RAW, null, StreamingBench::raw),
                new Peer(GMA_DIRECT, null, (size, n) -> StreamingBench.gma(registry.url(), size, n))));
        if (nats != null) {
            peers.add(nats.publishSubscribe());
        }
        if (jgroups != null) {
            peers.add(jgroups.unicast());
        }
        return peers;
    }

    /** GMA's ping-pong over the direct link, blocking (request/REPLY) or not (DATA answered by DATA). */
    Peer direct(String name, boolean blocking) {
        return new Peer(name, (size, n) -> ping.run(pong.name(), n, size, blocking), null);
    }

    Peer raw() {
        return new Peer(RAW, raw::run, StreamingBench::raw);
    }

    @Override
    public void close() throws Exception {
        if (jgroups != null) {
            jgroups.close();
        }
        if (nats != null) {
            nats.close();
        }
        raw.close();
        ping.close();
        pong.close();
        registry.close();
    }
}
