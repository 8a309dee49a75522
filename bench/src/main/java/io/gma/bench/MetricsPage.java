package io.gma.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A PC servlet's /metrics page (Prometheus text), as the benchmarks and the crash harness read it. */
public final class MetricsPage {
    private MetricsPage() {
    }

    /** The page of the PC servlet at {@code baseUrl} ({@code http://host:port}), within 10 s. */
    public static String fetch(String baseUrl) throws IOException, InterruptedException {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build().send(HttpRequest.newBuilder(
                URI.create(baseUrl + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The value of {@code sample} (a name, with its labels if any) on a page; 0 when it is not there. */
    public static long sample(String page, String sample) {
        for (String line : page.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return (long) Double.parseDouble(line.substring(sample.length() + 1));
            }
        }
        return 0;
    }
}
