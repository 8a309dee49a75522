package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HttpProxyTest {
    @Test
    void parsesHostAndPortAndNeverShowsThePassword() {
        assertEquals("http://proxy.corp.example:3128", HttpProxy.parse("http://proxy.corp.example:3128").toString());
        assertEquals("http://[::1]:8080 (user gma)", HttpProxy.parse("http://[::1]:8080/").credentials("gma",
                "s3cret").toString());
    }

    @Test
    void refusesWhatIsNotAnHttpProxyUrlNamingIt() {
        assertEquals("proxy URL https://p:443 is not http://host:port (an HTTP proxy; https destinations go"
                + " through it by CONNECT)", assertThrows(IllegalArgumentException.class,
                        () -> HttpProxy.parse("https://p:443")).getMessage());
        assertEquals("proxy URL http://p lacks a host or a port; write http://host:port",
                assertThrows(IllegalArgumentException.class, () -> HttpProxy.parse("http://p")).getMessage());
        String withSecret = assertThrows(IllegalArgumentException.class,
                () -> HttpProxy.parse("http://gma:s3cret@p:3128")).getMessage();
        assertFalse(withSecret.contains("s3cret"), withSecret);
        assertTrue(withSecret.contains("--proxy-password-file"), withSecret);
        assertThrows(IllegalArgumentException.class, () -> HttpProxy.parse("http://p:3128/path"));
        assertThrows(IllegalArgumentException.class, () -> HttpProxy.parse("http://p:3128").credentials("a:b", "x"));
    }

    @Test
    void noProxyMatchesNamesTheirSubdomainsAndAddresses() {
        HttpProxy p = HttpProxy.parse("http://p:3128").noProxy(" corp.example, .lan ,10.0.0.5,[::1]");
        assertTrue(p.bypasses("corp.example"));
        assertTrue(p.bypasses("registry.CORP.example"));
        assertTrue(p.bypasses("gw.lan"));
        assertTrue(p.bypasses("10.0.0.5"));
        assertTrue(p.bypasses("[::1]"));
        assertFalse(p.bypasses("notcorp.example"));
        assertFalse(p.bypasses("10.0.0.50"));
        assertFalse(p.bypasses("west.example.org"));
        assertTrue(HttpProxy.parse("http://p:3128").noProxy("*").bypasses("anything"));
        assertFalse(HttpProxy.parse("http://p:3128").bypasses("anything"));
    }
}
