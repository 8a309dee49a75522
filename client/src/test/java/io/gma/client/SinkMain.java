package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * A consumer in a JVM of its own, for {@link OpenFileLimitTest}: it prints what it gets until its input ends (or
 * it is killed).
 *
 * <pre>SinkMain REGISTRY_URL LABEL</pre>
 *
 * <p>Output: {@code ready NAME}, then {@code got TEXT} for each message.
 */
final class SinkMain {
    private SinkMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Consumer c = Consumer.builder().registry(args[0]).domain("lan").label(args[1])
                .onMessage(m -> System.out.println("got " + new String(m.data(), UTF_8))).build()) {
            System.out.println("ready " + c.name());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
            while (in.readLine() != null) {
                // until the input ends
            }
        }
    }
}
