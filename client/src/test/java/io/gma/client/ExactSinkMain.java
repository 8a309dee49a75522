package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * A consumer under an exact name in a JVM of its own, for {@link TakeoverTest}: it subscribes to a producer with a
 * filter and prints what it gets, until its input ends (or it is killed).
 *
 * <pre>ExactSinkMain REGISTRY_URL LABEL PRODUCER FILTER</pre>
 *
 * <p>Output: {@code ready NAME}, then {@code got TEXT} for each message.
 */
final class ExactSinkMain {
    private ExactSinkMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Consumer c = Consumer.builder().registry(args[0]).domain("lan").label(args[1]).exactLabel(true)
                .takeOver(true).onMessage(m -> System.out.println("got " + new String(m.data(), UTF_8))).build()) {
            c.subscribe(args[2], args[3]).acknowledged().get();
            System.out.println("ready " + c.name());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
            while (in.readLine() != null) {
                // until the input ends
            }
        }
    }
}
