package io.gma.internal.link;

import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Whether a peer that proved an identity may go by the name it says in HELLO (and so send from it, and be sent
 * what is addressed to it). A name's label is what was registered: the registry's record says, not the shape of
 * the name ({@code x-abc234@east} may be label {@code x} with a nonce, or the exact label {@code x-abc234}).
 *
 * <ul>
 *   <li>The identity itself (a PC servlet, an endpoint registered under its identity's name) may.</li>
 *   <li>A registered name: when the registry authenticates, only the identity that registered it; when it does
 *       not (its owner is {@link Security#ANONYMOUS}), an identity whose {@code register} rule here allows the
 *       registered {@code label@domain}.</li>
 *   <li>A name the registry does not know: nobody.</li>
 * </ul>
 *
 * <p>The registry's answers are remembered for {@link #REMEMBER_NANOS} (at most {@value #ENTRIES} names), so a
 * peer that reconnects costs no look-up; the look-up runs on the link's thread, during its handshake. Without
 * security every name is allowed and nothing is looked up. Thread-safe.
 */
public final class NameGuard {
    static final long REMEMBER_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final int ENTRIES = 4096;

    private record Known(String owner, String label, String domain, long at) {
    }

    private final Security security;
    private final RegistryClient registry;
    private final Map<String, Known> known = new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Known> eldest) {
            return size() > ENTRIES;
        }
    };

    /** @param registry where names are looked up (needed only with security on) */
    public NameGuard(Security security, RegistryClient registry) {
        this.security = security;
        this.registry = registry;
    }

    /** Null when {@code identity} may go by {@code name}, else why not. */
    public Refusal check(String identity, String name) {
        if (!security.authenticates() || name.equals(identity)) {
            return null;
        }
        Known k;
        try {
            k = lookUp(name);
        } catch (RegistryException e) {
            if (e.status() == 404) {
                return Refusal.forbidden("\"" + identity + "\" may not go by the name \"" + name + "\": no endpoint"
                        + " of that name is registered");
            }
            if (e.status() == 401 || e.status() == 403) {
                return Refusal.forbidden("cannot tell whether \"" + identity + "\" may go by the name \"" + name
                        + "\": the registry refused to look it up (" + e.getMessage() + ")");
            }
            return new Refusal(ErrorCode.INTERNAL, "cannot tell now whether \"" + identity + "\" may go by the name"
                    + " \"" + name + "\": " + e.getMessage());
        }
        if (k.owner() != null && !k.owner().equals(Security.ANONYMOUS)) {
            return k.owner().equals(identity) ? null : Refusal.forbidden("\"" + identity + "\" may not go by the"
                    + " name \"" + name + "\": another identity registered it");
        }
        String base = k.label() + "@" + k.domain();
        if (security.allows(identity, Rules.Verb.REGISTER, base)) {
            return null;
        }
        return Refusal.forbidden("\"" + identity + "\" may not go by the name \"" + name + "\": no register rule"
                + " lets it register \"" + base + "\"");
    }

    private Known lookUp(String name) throws RegistryException {
        long now = System.nanoTime();
        synchronized (known) {
            Known k = known.get(name);
            if (k != null && now - k.at() < REMEMBER_NANOS) {
                return k;
            }
        }
        EndpointInfo info = registry.lookup(name); // outside the lock: one slow look-up holds up no other
        Known k = new Known(info.owner(), info.label(), info.domain(), now);
        synchronized (known) {
            known.put(name, k);
        }
        return k;
    }
}
