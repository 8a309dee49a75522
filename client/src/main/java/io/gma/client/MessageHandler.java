package io.gma.client;

/**
 * Receives the application's messages. Runs on the link's event loop unless the builder was given an
 * executor: then it must not block (a blocking call would stall that link, its ACKs included); call
 * {@code requestAsync}, not {@code request}, from inside it.
 */
@FunctionalInterface
public interface MessageHandler {
    /**
     * @param message the message; an exception thrown here answers a REQUEST with ERROR INTERNAL
     */
    void onMessage(Incoming message) throws Exception;
}
