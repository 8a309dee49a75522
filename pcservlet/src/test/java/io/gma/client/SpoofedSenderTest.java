package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.gma.security.HttpClients;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review of issue 6: a PC servlet that lets domain east POST (a {@code post east east} rule) must not deliver,
 * from east's batch, a message whose sender names another domain: west's own endpoints, say.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpoofedSenderTest {
    @TempDir
    static Path keys;

    @Test
    void aBatchPostedAsOneDomainCarriesNoSenderOfAnother() throws Exception {
        TunnelFixture.makeKeys(keys);
        LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
        try (TunnelFixture f = new TunnelFixture(TunnelFixture.Firewalls.NONE, keys);
                Consumer inbox = f.consumer("inbox").onMessage(at::add).build()) {
            Security east = Security.fromDirectory(keys, "east", Tls.ClientAuth.NONE).build();
            OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), east).build();
            String west = "boss-aaaaaa@west"; // west's own, as the consumer would trust it
            byte[] batch = Packed.make(9, Command.DATA, west, inbox.name(), "from east, really".getBytes(UTF_8));
            Request post = new Request.Builder().url(f.west.url() + "/gma/v1/messages")
                    .header("Authorization", east.bearer("west")).header("X-Gma-Domain", "east")
                    .post(RequestBody.create(batch, MediaType.get("application/x-gma"))).build();
            try (Response r = http.newCall(post).execute()) {
                assertEquals(200, r.code(), r.body().string());
            }
            Incoming m = at.poll(2, TimeUnit.SECONDS);
            assertNull(m, "a message posted by east was delivered as from " + (m == null ? null : m.from()));
        }
    }
}
