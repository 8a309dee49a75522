package io.gma.bench.streaming;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.bench.BenchTls;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The raw baselines of the streaming benchmark, not their speed: what they stream, and that they fail fast. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamingBenchTest {
    @Test
    void theTlsBaselineStreamsEveryMessageOverTheJdksTlsSockets() throws Exception {
        double seconds = StreamingBench.raw(1024, 500, BenchTls.security("bob").tls(),
                BenchTls.security("alice").tls());
        assertTrue(seconds > 0, "seconds " + seconds);
    }

    @Test
    void aPlaintextWriterToTheTlsBaselineFailsAtOnceInsteadOfWaitingOutItsFiveMinutes() {
        // 10 KiB fit in the socket buffers, so the writer finishes: only the reader sees the refusal, and says so
        assertThrows(IOException.class, () -> StreamingBench.raw(1024, 10, BenchTls.security("bob").tls(), null));
    }
}
