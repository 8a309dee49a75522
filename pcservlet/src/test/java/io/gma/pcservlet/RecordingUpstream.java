package io.gma.client;

import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.util.concurrent.LinkedBlockingQueue;

/** A gateway's router for tests: takes every message, and keeps what it routed and what was undeliverable. */
final class RecordingRouter implements Gateway.Router {
    final LinkedBlockingQueue<Message> routed = new LinkedBlockingQueue<>();
    /** "destination CODE" of each undeliverable message. */
    final LinkedBlockingQueue<String> lost = new LinkedBlockingQueue<>();

    @Override
    public boolean route(Message m) {
        routed.add(m);
        return true;
    }

    @Override
    public void undeliverable(Message m, ErrorCode code, String reason) {
        lost.add(m.to() + " " + code);
    }
}
