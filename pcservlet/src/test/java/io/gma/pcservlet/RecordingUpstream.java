package io.gma.pcservlet;

import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import java.util.concurrent.LinkedBlockingQueue;

/** An uplink server's upstream for tests: takes every message, and keeps what it routed and what was undeliverable. */
final class RecordingUpstream implements UplinkServer.Upstream {
    final LinkedBlockingQueue<Message> routed = new LinkedBlockingQueue<>();
    /** "destination CODE" of each undeliverable message. */
    final LinkedBlockingQueue<String> lost = new LinkedBlockingQueue<>();

    @Override
    public UplinkServer.Routed route(Message m, String identity) {
        routed.add(m);
        return UplinkServer.Routed.TAKEN;
    }

    @Override
    public long undeliverable(byte[] packed, ErrorCode code, String reason) {
        lost.add(Packed.to(packed) + " " + code);
        return Spooling.NONE;
    }
}
