package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.security.Security;
import okhttp3.Call;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;

/**
 * A domain's URL that OkHttp cannot parse is {@link TunnelClient.BadUrl}, which the forwarder tells senders as
 * INTERNAL naming the URL, not the refusal of a plaintext URL (UNAUTHORIZED,
 * {@link PlaintextPeerUrlTest}): a port out of range, which java.net.URI takes, fails OkHttp's parse. A poll of
 * such a URL says the same.
 */
class TunnelClientTest {
    @Test
    void aUrlOkHttpCannotParseIsABadUrlNamingIt() {
        TunnelClient tunnel = new TunnelClient("west", Security.insecure(), null);
        try {
            RequestBody body = RequestBody.create(new byte[0]);
            TunnelClient.BadUrl bad = assertThrows(TunnelClient.BadUrl.class,
                    () -> tunnel.postCall("east", "http://127.0.0.1:99999/gma", body, "1/1/1", null));
            assertEquals("domain east's URL http://127.0.0.1:99999/gma is not a URL OkHttp can parse: Invalid URL"
                    + " port: \"99999\"", bad.getMessage());
            assertEquals(bad.getMessage().replace("east", "hub"), assertThrows(TunnelClient.BadUrl.class,
                    () -> tunnel.poll("hub", "http://127.0.0.1:99999/gma", 1, "", false, 1024)).getMessage());
            Call fine = tunnel.postCall("east", "http://127.0.0.1:8080/gma", body, "1/1/1", null);
            assertEquals("http://127.0.0.1:8080/gma" + Tunnel.MESSAGES_PATH, fine.request().url().toString());
        } finally {
            tunnel.close();
        }
    }
}
