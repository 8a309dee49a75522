package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PackedTest {
    private final byte[] packed = Packed.make(42, Command.DATA, "cpu-agent-k3x9qz@dsg", "collector@dsg", "load=0.73");

    @Test
    void readsFieldsInPlace() {
        assertEquals(42, Packed.sequence(packed));
        assertSame(Command.DATA, Packed.command(packed));
        assertEquals("cpu-agent-k3x9qz@dsg", Packed.from(packed));
        assertEquals("collector@dsg", Packed.to(packed));
        assertEquals("load=0.73", Packed.dataAsString(packed));
        assertEquals(9, Packed.dataLength(packed));
        assertEquals(packed.length - 9, Packed.dataOffset(packed));
        assertEquals('l', packed[Packed.dataOffset(packed)]);
    }

    @Test
    void refusesArrayThatIsNotOneMessage() {
        byte[] longer = java.util.Arrays.copyOf(packed, packed.length + 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Packed.to(longer));
        assertEquals("not a packed GMA/1 message of 63 bytes (make it with Packed.make or Packed.marshal)",
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Packed.sequence(new byte[3]));
    }

    @Test
    void headerAndNameGettersAllocateNothing() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (int i = 0; i < 1000; i++) {
            sink += read(packed);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            sink += read(packed);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(sink != 0);
        // the allocation counter itself may cost a few hundred bytes; one String per call would be megabytes
        assertTrue(allocated < 16 * 1024, allocated + " bytes allocated by 100,000 reads of 7 fields");
    }

    private static long read(byte[] p) {
        return Packed.sequence(p) + Packed.command(p).code() + Packed.flags(p) + Packed.dataLength(p)
                + Packed.dataOffset(p) + Packed.from(p).length() + Packed.to(p).length();
    }
}
