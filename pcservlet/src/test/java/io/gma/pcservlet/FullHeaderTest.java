package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.Registry;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.WireCodec;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A 429 for a batch with many full endpoints: X-Gma-Full is cut to fit, and the answer stays a 429. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FullHeaderTest {
    @Test
    void aBatchForManyFullEndpointsIsAnswered429() throws Exception {
        OkHttpClient http = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(20)).build();
        Registry registry = Registry.builder().port(0).build().start();
        try (PcServer west = PcServer.builder("west", registry.url()).maxEndpointBytes(1024)
                .drainTimeout(Duration.ofMillis(200)).start()) {
            registry.close(); // endpoints cannot be checked: their messages are queued, checked later
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            for (int i = 0; i < 400; i++) { // 200 subscribers of a fan-out, names of 50 characters
                String to = String.format("subscriber-of-the-cpu-temperature-feed-%06d@west", i);
                batch.writeBytes(WireCodec.standard().encode(Message.of(Command.DATA, "src-aaaaaa@east", to,
                        i + 1, new byte[1100])));
            }
            byte[] body = batch.toByteArray();
            try (Response first = post(http, west, body)) {
                assertEquals(200, first.code(), "empty queues take any share");
            }
            try (Response second = post(http, west, body)) {
                String full = second.header(Tunnel.FULL_HEADER);
                System.out.println("REVIEW second answer " + second.code() + ", X-Gma-Full "
                        + (full == null ? "absent" : full.length() + " characters"));
                assertEquals(429, second.code(), second.body().string());
            }
        }
    }

    private static Response post(OkHttpClient http, PcServer pc, byte[] body) throws Exception {
        return http.newCall(new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH)
                .header(Tunnel.DOMAIN_HEADER, "east")
                .post(RequestBody.create(body, MediaType.get("application/x-gma"))).build()).execute();
    }
}
