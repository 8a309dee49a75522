package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What fails on an event loop or an acceptor stays as small as it can: an Error in one link's step (a class that
 * could not load because the process was out of file descriptors, which CI met) ends that link only; one as a
 * connection is accepted ends that connection only; a loop that fails as a whole ends its links, and the next link
 * its group is given gets a new loop. Before, each left every later link unserved, for ever: the connection made,
 * and never answered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventLoopFailureTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** The accepting side's listener of each peer's link, by the peer's name. */
    private final Map<String, Side> accepted = new ConcurrentHashMap<>();
    /** What the acceptor meets instead of the next link's listener, once. */
    private final AtomicReference<Error> nextAccept = new AtomicReference<>();
    /** One loop on the accepting side, so every link lands on the loop that failed. */
    private LoopbackLinks links;

    @BeforeEach
    void listen() throws IOException {
        links = new LoopbackLinks("test-failure", this::listener);
    }

    @AfterEach
    void close() throws IOException {
        links.close();
    }

    @Test
    void anErrorInOneLinksStepEndsThatLinkAndTheLoopServesOn() throws Exception {
        Side doomed = connect("doomed");
        doomed.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(ErrorCode.INTERNAL, serverSide("doomed").closed.getNow(null).code(), "the link that met it");

        Side next = connect("next");
        next.opened.get(WAIT.toSeconds(), TimeUnit.SECONDS); // the loop that met the Error serves the next link
    }

    @Test
    void anErrorAsALinkIsAcceptedEndsThatConnectionAndTheAcceptorGoesOn() throws Exception {
        nextAccept.set(new NoClassDefFoundError("io/gma/Simulated (Too many open files)"));
        Side refused = connect("refused");
        refused.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS); // its connection closed before a link was made
        Side next = connect("next");
        next.opened.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void aLoopThatFailsEndsItsLinksAndTheNextLinkGetsANewLoop() throws Exception {
        Side bystander = connect("bystander");
        bystander.opened.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Side breaker = connect("breaker");
        breaker.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        bystander.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS); // every link of the failed loop ends, and says so

        Side next = connect("next");
        next.opened.get(WAIT.toSeconds(), TimeUnit.SECONDS); // on a new loop
        assertEquals(ErrorCode.INTERNAL, serverSide("bystander").closed.getNow(null).code(),
                "the failed loop's links were told why");
    }

    /** The accepting side's listener of the next link, or the Error a test put in its place. */
    private Side listener() {
        Error e = nextAccept.getAndSet(null);
        if (e != null) {
            throw e;
        }
        return new Side();
    }

    private Side serverSide(String name) throws Exception {
        Side s = accepted.get(name);
        assertNotNull(s, "no link of " + name + " was accepted");
        s.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return s;
    }

    private Side connect(String name) throws IOException {
        Side side = new Side();
        links.connect(name, side);
        return side;
    }

    /**
     * Either side's listener of one link: whether it opened, and why it closed. On the accepting side, a peer
     * named {@code doomed} gets an Error in a task of its link, and one named {@code breaker} breaks its loop.
     */
    private final class Side extends QuietListener {
        final CompletableFuture<Link> opened = new CompletableFuture<>();
        final CompletableFuture<LinkException> closed = new CompletableFuture<>();

        @Override
        public Refusal refusal(Message hello, String identity) {
            accepted.put(hello.from(), this);
            return null;
        }

        @Override
        public void linkOpened(Link link) {
            opened.complete(link);
            if (link.outbound()) {
                return;
            }
            if (link.peerName().equals("doomed")) {
                // a task, not a read: a thread that dies mid-read has its loop taken on by the stall guard
                link.execute(() -> {
                    throw new NoClassDefFoundError("io/gma/Simulated (Too many open files)");
                });
            } else if (link.peerName().equals("breaker")) {
                try {
                    link.loop().selector().close(); // as an I/O failure would break it: the next select throws
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }
        }

        @Override
        public void linkClosed(Link link, LinkException reason) {
            closed.complete(reason);
        }
    }
}
