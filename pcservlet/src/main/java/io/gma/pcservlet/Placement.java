package io.gma.pcservlet;

/**
 * What became of messages offered whole to the PC servlet's queues: all were queued, or none was, because a
 * queue had no room, or because the queues are closed (the PC servlet is stopping).
 */
sealed interface Placement {
    /** All were queued. */
    Placement PLACED = new Placed();

    /** Whether all were queued. */
    default boolean placed() {
        return this instanceof Placed;
    }

    /** All were queued. */
    record Placed() implements Placement {
    }

    /**
     * None was: a queue had no room for its share.
     *
     * @param why which queue, how full, and what came (a sentence for an ERROR or a 429)
     */
    record NoRoom(String why) implements Placement {
    }

    /**
     * None was: the queues are closed for good.
     *
     * @param why a sentence saying so
     */
    record Closed(String why) implements Placement {
    }
}
