package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What a large write offers the socket next: never more than the buffer it is copied into holds. */
class LargeOfferTest {
    private static final int LARGE = BufferPool.LARGE_OUTPUT.bytes();
    private static final int SMALL = BufferPool.OUTPUT.bytes();

    @Test
    void aSocketThatTookMoreThanHalfIsOfferedNoMoreThanTheBuffer() {
        // the CI failure of 8b9827b: 1 MiB offered, 600 KiB taken, twice that offered next overflowed the buffer
        assertEquals(LARGE, LinkWriter.nextLargeOffer(LARGE, LARGE, 600 << 10));
        for (int n = 0; n <= LARGE; n += 4093) {
            int next = LinkWriter.nextLargeOffer(LARGE, LARGE, n);
            assertTrue(next <= LARGE && next >= SMALL, "took " + n + ", offered next " + next);
        }
    }

    @Test
    void aSlowSocketIsOfferedTwiceWhatItTookAndAFastOneTwiceTheOffer() {
        assertEquals(2 * 200_000, LinkWriter.nextLargeOffer(LARGE, LARGE, 200_000));
        assertEquals(SMALL, LinkWriter.nextLargeOffer(LARGE, LARGE, 1_000), "never below the output buffer");
        assertEquals(2 * 400_000, LinkWriter.nextLargeOffer(400_000, 400_000, 400_000));
        assertEquals(800_000, LinkWriter.nextLargeOffer(400_000, 300_000, 300_000), "the offer grows, not the tail");
        assertEquals(LARGE, LinkWriter.nextLargeOffer(LARGE, LARGE, LARGE));
    }
}
