package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The caps on connections not yet authenticated, as counting alone: admit, refuse, release, log, properties. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HandshakeAdmissionTest {
    private final AtomicLong now = new AtomicLong();

    private static InetAddress address(int last) throws Exception {
        return InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) last});
    }

    @Test
    void refusesOverTheProcessCapUntilOneIsReleased() throws Exception {
        HandshakeAdmission a = new HandshakeAdmission(3, 10, now::get);
        List<HandshakeAdmission.Ticket> tickets = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            tickets.add(assertAdmitted(a, address(i)));
        }
        assertNull(a.admit(address(4), "test"));
        assertEquals(3, a.pending());
        tickets.get(0).release();
        assertEquals(2, a.pending());
        assertNotNull(a.admit(address(4), "test"));
    }

    @Test
    void refusesOverTheCapOfOneAddressButAdmitsOthers() throws Exception {
        HandshakeAdmission a = new HandshakeAdmission(10, 2, now::get);
        HandshakeAdmission.Ticket first = assertAdmitted(a, address(1));
        assertAdmitted(a, address(1));
        assertNull(a.admit(address(1), "test"));
        assertEquals(2, a.pending(), "a refusal by address leaves the process's count as it was");
        assertAdmitted(a, address(2));
        first.release();
        assertEquals(1, a.pending(address(1)));
        assertAdmitted(a, address(1));
    }

    @Test
    void releasingTwiceCountsOnce() throws Exception {
        HandshakeAdmission a = new HandshakeAdmission(10, 10, now::get);
        HandshakeAdmission.Ticket t = assertAdmitted(a, address(1));
        assertAdmitted(a, address(1));
        t.release();
        t.release();
        assertEquals(1, a.pending());
        assertEquals(1, a.pending(address(1)));
    }

    @Test
    void forgetsAnAddressOnceNothingIsPendingFromIt() throws Exception {
        HandshakeAdmission a = new HandshakeAdmission(10, 10, now::get);
        assertAdmitted(a, address(1)).release();
        assertEquals(0, a.pending(address(1)));
        assertEquals(0, a.pending());
    }

    @Test
    void logsRefusalsAtMostOncePerInterval() throws Exception {
        HandshakeAdmission a = new HandshakeAdmission(1, 1, now::get);
        assertAdmitted(a, address(1));
        for (int i = 0; i < 1000; i++) {
            assertNull(a.admit(address(2), "test"));
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertEquals(1, a.logLines(), "1000 refusals in 1 s");
        now.addAndGet(HandshakeAdmission.LOG_EVERY_NANOS);
        assertNull(a.admit(address(2), "test"));
        assertNull(a.admit(address(2), "test"));
        assertEquals(2, a.logLines());
    }

    @Test
    void propertiesAreValidatedWithASentence() {
        String name = "gma.test.maxUnauthenticated";
        try {
            assertEquals(256, HandshakeAdmission.property(name, 256));
            System.setProperty(name, " 17 ");
            assertEquals(17, HandshakeAdmission.property(name, 256));
            System.setProperty(name, "many");
            assertEquals("system property gma.test.maxUnauthenticated is \"many\": not a whole number (1..1000000,"
                    + " default 256)", assertThrows(IllegalArgumentException.class,
                            () -> HandshakeAdmission.property(name, 256)).getMessage());
            System.setProperty(name, "0");
            assertEquals("system property gma.test.maxUnauthenticated is 0, outside 1..1000000 (default 256)",
                    assertThrows(IllegalArgumentException.class, () -> HandshakeAdmission.property(name, 256))
                            .getMessage());
        } finally {
            System.clearProperty(name);
        }
    }

    @Test
    void theProcessesCapsAreTheDefaultsUnlessSet() {
        HandshakeAdmission p = HandshakeAdmission.process();
        assertEquals(HandshakeAdmission.property(HandshakeAdmission.MAX_PROPERTY, 256), p.max());
        assertEquals(HandshakeAdmission.property(HandshakeAdmission.MAX_PER_ADDRESS_PROPERTY, 64), p.maxPerAddress());
    }

    private static HandshakeAdmission.Ticket assertAdmitted(HandshakeAdmission a, InetAddress from) {
        HandshakeAdmission.Ticket t = a.admit(from, "test");
        assertNotNull(t, "refused " + from + " with " + a.pending() + " pending");
        return t;
    }
}
