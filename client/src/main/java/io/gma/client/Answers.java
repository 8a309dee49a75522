package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waiting for producers' answers to table queries, as the mediator and history queries do. */
final class Answers {
    private Answers() {
    }

    /** Refuses a blocking {@code call} on a link's event loop, which must go on reading the answers. */
    static void notOnEventLoop(String call) {
        if (IoThreads.isCurrent()) {
            throw new IllegalStateException(call + "() would block this link's event loop, which must read the"
                    + " producers' answers: call it from another thread");
        }
    }

    /**
     * Waits for {@code f} a little longer than {@code timeout}, the requests' own (which fails them first).
     *
     * @throws EndpointException its failure; TIMEOUT when interrupted or past the wait; INTERNAL for anything else
     */
    static <T> T await(CompletableFuture<T> f, Duration timeout) throws EndpointException {
        try {
            return f.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.TIMEOUT, "interrupted", ex);
        } catch (TimeoutException ex) {
            throw new EndpointException(ErrorCode.TIMEOUT, "no answer within " + timeout.toMillis() + " ms", ex);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof EndpointException e) {
                throw e;
            }
            throw new EndpointException(ErrorCode.INTERNAL, ex.getCause().toString(), ex);
        }
    }
}
