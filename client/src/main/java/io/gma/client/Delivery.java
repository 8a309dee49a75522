package io.gma.client;

import io.gma.wire.Command;
import io.gma.wire.Message;

/** An {@link Incoming} over a received message, able to reply to its sender. */
final class Delivery implements Incoming {
    private final Outbox outbox;
    private final Message message;
    /** The payload, once {@link #data()} made it: the handler's from then on. */
    private byte[] data;

    Delivery(Outbox outbox, Message message) {
        this.outbox = outbox;
        this.message = message;
    }

    @Override
    public String from() {
        return message.from();
    }

    @Override
    public Command command() {
        return message.command();
    }

    @Override
    public long sequence() {
        return message.sequence();
    }

    @Override
    public byte[] data() {
        if (data == null) {
            data = message.sharedData(); // a large message's data as it was read, not copied (WireCodec)
        }
        return data;
    }

    @Override
    public boolean replyExpected() {
        // on another command, the flag asks for a receipt, which the endpoint sends itself
        return message.replyExpected() && message.command() == Command.REQUEST;
    }

    @Override
    public void reply(byte[] data) throws EndpointException {
        outbox.sendControl(message.from(), Command.REPLY, message.sequence(), data);
    }

    @Override
    public String toString() {
        return message.toString();
    }
}
