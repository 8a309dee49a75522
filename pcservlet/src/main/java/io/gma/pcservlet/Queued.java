package io.gma.pcservlet;

import io.gma.wire.Message;

/**
 * A message in one of the PC servlet's queues for other domains ({@link DomainQueue}), with the number of its
 * record in the spool, which is acknowledged there once the next hop has the message.
 *
 * @param spoolSeq its record's number, or {@link Spooling#NONE} when it is not spooled (a PC servlet in memory)
 */
record Queued(Message message, long spoolSeq) {
    /** A message that is not spooled. */
    static Queued inMemory(Message m) {
        return new Queued(m, Spooling.NONE);
    }

    int encodedLength() {
        return message.encodedLength();
    }
}
