package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A writer's output buffers: a large one for a large message, each given back to the pool it came from. */
class BufferPoolTest {
    @Test
    void aLargeRunTakesALargeBufferAndEachGoesBackToItsOwnPool() {
        int small = BufferPool.OUTPUT.bytes();
        ByteBuffer forSmall = BufferPool.takeOutput(small);
        ByteBuffer forLarge = BufferPool.takeOutput(small + 1);
        ByteBuffer forHuge = BufferPool.takeOutput(64 << 20);
        assertEquals(small, forSmall.capacity());
        assertEquals(BufferPool.LARGE_OUTPUT.bytes(), forLarge.capacity());
        assertEquals(BufferPool.LARGE_OUTPUT.bytes(), forHuge.capacity()); // a larger message goes in pieces
        assertTrue(forSmall.isDirect() && forLarge.isDirect());

        forLarge.put((byte) 1);
        BufferPool.giveBackOutput(forLarge);
        BufferPool.giveBackOutput(forSmall);
        // each pool, drained: the large buffer is in the large pool, cleared, and the small one in the small pool
        java.util.List<ByteBuffer> large = new java.util.ArrayList<>();
        for (int i = 0; i < BufferPool.LARGE_POOLED; i++) {
            large.add(BufferPool.LARGE_OUTPUT.take());
        }
        java.util.List<ByteBuffer> smalls = new java.util.ArrayList<>();
        for (int i = 0; i < BufferPool.POOLED; i++) {
            smalls.add(BufferPool.OUTPUT.take());
        }
        assertTrue(large.stream().anyMatch(b -> b == forLarge));
        assertEquals(0, forLarge.position());
        assertTrue(smalls.stream().anyMatch(b -> b == forSmall));
        assertTrue(smalls.stream().allMatch(b -> b.capacity() == small), "a large buffer went to the small pool");
        large.forEach(BufferPool::giveBackOutput);
        smalls.forEach(BufferPool::giveBackOutput);
        BufferPool.giveBackOutput(forHuge);
    }
}
