package io.gma.registry;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The dashboard's sign-in, for a registry that authenticates ({@code /registry/v1/session}): a person pastes a
 * token once; the registry authenticates that call as every call, and keeps the token here under a random
 * session id, which the browser holds in a cookie ({@code HttpOnly}, {@code SameSite=Strict}, {@code Secure} on
 * HTTPS, its path the API's). A call that carries the cookie and no {@code Authorization} header is then
 * authenticated as if it carried the session's token: its expiry, the trust file's changes and the rules apply
 * as they would to the token itself, and a session whose token is refused ends. The token never reaches the
 * page's script again, nor a URL, nor the browser's storage.
 *
 * <p>Against cross-site requests: {@code SameSite=Strict} keeps the cookie off requests that other sites
 * start, but a page of the same site on another port (another server on this host) still has it sent, so a
 * request with the cookie must come from the registry's own origin: a foreign {@code Origin} is refused, and so
 * is none on any method but GET and HEAD (browsers name the origin of every POST, PUT and DELETE). Signing in
 * from a foreign origin is refused too.
 *
 * <p>At most {@value #MAX_SESSIONS} sessions are kept, the least recently used dropped first; they live in
 * memory, so a restart of the registry ends them. Thread-safe: one lock over the map, nothing done under it
 * but get, put and remove.
 */
final class DashboardSessions {
    /** The cookie's name. */
    static final String COOKIE = "gma-session";
    static final int MAX_SESSIONS = 1024;
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{43}");
    private static final String BEARER = "Bearer ";

    private final SecureRandom random = new SecureRandom();
    /** Session id to the token it was opened with. Guarded by itself. */
    private final Map<String, String> tokens = new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > MAX_SESSIONS;
        }
    };

    /**
     * The request as the authenticator should see it: as sent, or, when it carries a session's cookie and no
     * {@code Authorization} header, bearing the session's token.
     *
     * @throws ApiException 403 when the cookie comes from another origin (or names none, on a method that
     *     changes something); 401 when the session is not known (signed out, or the registry restarted), and the
     *     browser is told to drop the cookie
     */
    HttpServletRequest authenticating(HttpServletRequest req, HttpServletResponse resp) {
        String id = id(req);
        if (id == null || req.getHeader("Authorization") != null) {
            return req;
        }
        checkOrigin(req, !req.getMethod().equals("GET") && !req.getMethod().equals("HEAD"));
        String token;
        synchronized (tokens) {
            token = tokens.get(id);
        }
        if (token == null) {
            clear(req, resp);
            throw new ApiException(401, "UNAUTHORIZED", "this dashboard session has ended (signed out, or the"
                    + " registry restarted): sign in again");
        }
        return new Bearing(req, token);
    }

    /**
     * Ends the session of a request whose token ({@link #authenticating}) the authenticator refused, and tells
     * the browser to drop the cookie.
     *
     * @return the 401 to answer, with the authenticator's sentence
     */
    ApiException refused(HttpServletRequest req, HttpServletResponse resp, String why) {
        end(req);
        clear(req, resp);
        return new ApiException(401, "UNAUTHORIZED", "this dashboard session has ended: " + why);
    }

    private void end(HttpServletRequest req) {
        String id = id(req);
        if (id != null) {
            synchronized (tokens) {
                tokens.remove(id);
            }
        }
    }

    /**
     * {@code /session}, once authenticated: GET says who the caller is; POST, with the token in the
     * {@code Authorization} header, opens a session for it and sets the cookie (ending the one the request
     * carried); DELETE ends the request's session and clears the cookie.
     *
     * @return the answer: {@code identity}, and {@code session}, whether a session now stands for the caller
     * @throws ApiException 400 for a POST without a token; 403 for a POST from another origin
     */
    Map<String, Object> call(HttpServletRequest req, HttpServletResponse resp, String identity) {
        String method = req.getMethod();
        boolean session = id(req) != null && req.getHeader("Authorization") == null;
        if (method.equals("POST")) {
            checkOrigin(req, false);
            String authorization = req.getHeader("Authorization");
            if (authorization == null || !authorization.startsWith(BEARER)) {
                throw ApiException.badRequest("sign in with the header 'Authorization: Bearer <token>'");
            }
            end(req);
            byte[] bytes = new byte[32];
            random.nextBytes(bytes);
            String id = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            synchronized (tokens) {
                tokens.put(id, authorization.substring(BEARER.length()));
            }
            resp.addHeader("Set-Cookie", cookie(req, id));
            session = true;
        } else if (method.equals("DELETE")) {
            end(req);
            clear(req, resp);
            session = false;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("identity", identity);
        out.put("session", session);
        return out;
    }

    /** Tells the browser to drop the cookie, if the request carried one. */
    private static void clear(HttpServletRequest req, HttpServletResponse resp) {
        if (id(req) != null) {
            resp.addHeader("Set-Cookie", cookie(req, "") + "; Max-Age=0");
        }
    }

    private static String cookie(HttpServletRequest req, String value) {
        return COOKIE + "=" + value + "; Path=" + req.getContextPath() + req.getServletPath()
                + "; HttpOnly; SameSite=Strict" + (req.isSecure() ? "; Secure" : "");
    }

    /** The session id of the request's cookie, or null: no cookie, or one of another shape (never issued here). */
    private static String id(HttpServletRequest req) {
        Cookie[] cookies = req.getCookies();
        if (cookies != null) {
            for (Cookie c : cookies) {
                if (c.getName().equals(COOKIE)) {
                    return ID.matcher(c.getValue()).matches() ? c.getValue() : null;
                }
            }
        }
        return null;
    }

    /**
     * Refuses a request from another origin than the registry's own, as the browser names it: the scheme and the
     * Host header the page was loaded from.
     *
     * @param required whether a request that names no origin is refused as well
     */
    private static void checkOrigin(HttpServletRequest req, boolean required) {
        String origin = req.getHeader("Origin");
        String own = req.getScheme() + "://" + req.getHeader("Host");
        if (origin == null ? required : !origin.equalsIgnoreCase(own)) {
            throw ApiException.forbidden((origin == null ? "a " + req.getMethod() + " with a dashboard session"
                    + " names no Origin" : "Origin " + Json.quote(origin) + " is not this registry's (" + own + ")")
                    + ": a dashboard session answers the registry's own dashboard only");
        }
    }

    /** The request, bearing a session's token as its {@code Authorization} header. */
    private static final class Bearing extends HttpServletRequestWrapper {
        private final String authorization;

        Bearing(HttpServletRequest req, String token) {
            super(req);
            this.authorization = BEARER + token;
        }

        @Override
        public String getHeader(String name) {
            return name.equalsIgnoreCase("Authorization") ? authorization : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return name.equalsIgnoreCase("Authorization") ? Collections.enumeration(List.of(authorization))
                    : super.getHeaders(name);
        }
    }
}
