package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The large output buffers a writer borrows for one write: no more are ever lent than the pool keeps, so that
 * many threads writing large messages at once do not churn direct memory; one given back is lent again.
 */
class BufferPoolTest {
    @Test
    void theLargePoolLendsNoMoreThanItKeepsAndLendsAgainWhatComesBack() {
        List<ByteBuffer> out = new ArrayList<>();
        for (int i = 0; i < BufferPool.LARGE_POOLED; i++) {
            ByteBuffer b = BufferPool.LARGE_OUTPUT.lend();
            assertNotNull(b, "buffer " + i);
            assertEquals(BufferPool.LARGE_OUTPUT.bytes(), b.capacity());
            assertTrue(b.isDirect());
            out.add(b);
        }
        assertNull(BufferPool.LARGE_OUTPUT.lend(), "a buffer past the pool's " + BufferPool.LARGE_POOLED);
        ByteBuffer back = out.remove(0);
        back.put((byte) 7);
        BufferPool.LARGE_OUTPUT.giveBackLent(back);
        ByteBuffer again = BufferPool.LARGE_OUTPUT.lend();
        assertEquals(0, again.position(), "cleared");
        out.add(again);
        java.util.Set<ByteBuffer> distinct = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        distinct.addAll(out);
        assertEquals(BufferPool.LARGE_POOLED, distinct.size());
        out.forEach(BufferPool.LARGE_OUTPUT::giveBackLent);
        ByteBuffer last = BufferPool.LARGE_OUTPUT.lend();
        assertNotNull(last, "all given back");
        BufferPool.LARGE_OUTPUT.giveBackLent(last);
    }
}
