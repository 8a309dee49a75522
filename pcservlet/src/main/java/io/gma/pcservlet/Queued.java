package io.gma.pcservlet;

import io.gma.wire.Message;

/**
 * A message in one of the PC servlet's queues, with the number of its record in the spool, which is acknowledged
 * there once the next hop has the message. What the queues look at for every message they hold (its size, its
 * destination, whether it is an answer) is copied in, so that a pass over a queue reads these objects alone and
 * not each message behind them too.
 *
 * @param spoolSeq its record's number, or {@link Spooling#NONE} when it is not spooled (a PC servlet in memory)
 * @param encodedLength {@code message}'s
 * @param to {@code message}'s destination
 * @param control whether {@code message}'s command is a control one (answers are never held back nor capped)
 */
record Queued(Message message, long spoolSeq, int encodedLength, String to, boolean control) {
    Queued(Message message, long spoolSeq) {
        this(message, spoolSeq, message.encodedLength(), message.to(), message.command().isControl());
    }

    /** A message that is not spooled. */
    static Queued inMemory(Message m) {
        return new Queued(m, Spooling.NONE);
    }
}
