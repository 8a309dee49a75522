package io.gma.registry;

import io.gma.wire.Threads;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes endpoint and domain rows whose lease has passed. The views hide such rows at the instant of
 * expiry; sweeping keeps the tables small. Runs on its own daemon thread; a failed sweep is logged and
 * the next one tries again.
 */
final class LeaseSweeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseSweeper.class);

    private final ScheduledExecutorService timer;

    LeaseSweeper(EndpointStore store, Duration interval) {
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-registry-sweeper"));
        long millis = interval.toMillis();
        timer.scheduleWithFixedDelay(() -> {
            try {
                int removed = store.sweep();
                if (removed > 0) {
                    LOG.debug("swept {} expired registrations", removed);
                }
            } catch (SQLException | RuntimeException e) {
                LOG.warn("lease sweep failed, will retry in {} ms: {}", millis, e.toString());
            }
        }, millis, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
