package io.gma.pcservlet;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** What tests read of a running PC servlet (its /metrics), and a free port for one to restart on. */
final class TestPages {
    private TestPages() {
    }

    /** A port free now, for a PC servlet that must come back on the same one after a restart. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** {@code pc}'s /metrics page. */
    static String metrics(PcServer pc) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(pc.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The value of {@code sample} (a name, with its labels if any) in a /metrics page; -1 when it is not there. */
    static long sample(String metrics, String sample) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return (long) Double.parseDouble(line.substring(sample.length() + 1));
            }
        }
        return -1;
    }
}
