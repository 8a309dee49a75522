package io.gma.registry.api;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import okhttp3.HttpUrl;

/**
 * The registries one client calls, all serving one database, and the order a call tries them in: the URLs as
 * given, those that failed lately last. A call goes on to the next URL only when the one it tried gave no answer
 * (status 0, {@code UNREACHABLE}: refused, reset, timed out) or a 502, 503 or 504, which say that this registry,
 * or the proxy before it, could not serve it now; any other answer is the database's, which the next registry
 * would give too (a 4xx refusal, a 500 of the database), and ends the call. A URL that failed rests: calls try it
 * only after the others, for 2 s after its first failure in a row, doubling up to 32 s; when its rest is over it is
 * tried first again, and an answer ends its rest.
 *
 * <p>With one URL a call is one attempt, as if there were no list. A call that succeeds on the first URL reads its
 * rest and writes nothing. The rests are written without a lock: two calls failing at once may each double it, or
 * one may undo the other's, which only moves a retry by a rest.
 */
final class Failover {
    /** How long a URL rests after its first failure in a row; each further one doubles it, up to the longest. */
    static final long FIRST_REST_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final long LONGEST_REST_NANOS = TimeUnit.SECONDS.toNanos(32);

    private final Target[] targets;

    /** @param apis the API URLs (base URL and {@link RegistryClient#API_PATH}), at least one, in preference order */
    Failover(List<HttpUrl> apis) {
        this.targets = new Target[apis.size()];
        for (int i = 0; i < targets.length; i++) {
            targets[i] = new Target(apis.get(i));
        }
    }

    /** Whether there is more than one registry to try. */
    boolean several() {
        return targets.length > 1;
    }

    /** One attempt of a call at one registry's API URL. */
    interface Attempt<T> {
        T at(HttpUrl api) throws RegistryException;
    }

    /**
     * Makes the call at the registries in turn until one answers it.
     *
     * @throws RegistryException the answer that ended the call, with the failures of the registries tried before
     *     it as its suppressed exceptions; or, when none answered, the last failure (with one URL, as it was),
     *     or one naming every failure, with the status and code of the last
     */
    <T> T call(Attempt<T> attempt) throws RegistryException {
        if (targets.length == 1) {
            return attempt.at(targets[0].api);
        }
        List<RegistryException> failures = null;
        List<HttpUrl> failedAt = null;
        long now = System.nanoTime();
        for (int pass = 0; pass < 2; pass++) {
            for (Target t : targets) {
                // the first pass tries those not resting; the second those the first left out, which rested
                if (pass == 0 ? t.resting(now) : failedAt != null && failedAt.contains(t.api)) {
                    continue;
                }
                try {
                    T answer = attempt.at(t.api);
                    t.answered();
                    return answer;
                } catch (RegistryException e) {
                    if (!failsOver(e)) {
                        t.answered();
                        if (failures != null) {
                            failures.forEach(e::addSuppressed);
                        }
                        throw e;
                    }
                    t.failed(System.nanoTime());
                    if (failures == null) {
                        failures = new ArrayList<>(targets.length);
                        failedAt = new ArrayList<>(targets.length);
                    }
                    failures.add(e);
                    failedAt.add(t.api);
                }
            }
        }
        throw noneAnswered(failures, failedAt);
    }

    /** Whether another registry may serve what this failure did not: no answer, or a 502, 503 or 504. */
    static boolean failsOver(RegistryException e) {
        int s = e.status();
        return s == 0 || s == 502 || s == 503 || s == 504;
    }

    private RegistryException noneAnswered(List<RegistryException> failures, List<HttpUrl> failedAt) {
        StringJoiner each = new StringJoiner("; ", "none of the " + targets.length + " registries answered: ", "");
        for (int i = 0; i < failures.size(); i++) {
            RegistryException e = failures.get(i);
            // a failure without an answer names its URL already; an answer's sentence does not
            each.add(e.status() == 0 ? e.getMessage() : "registry at " + failedAt.get(i) + " answered "
                    + e.status() + " " + e.code() + ": " + e.getMessage());
        }
        RegistryException last = failures.get(failures.size() - 1);
        RegistryException all = new RegistryException(last.status(), last.code(), each.toString(), last);
        for (int i = 0; i < failures.size() - 1; i++) {
            all.addSuppressed(failures.get(i));
        }
        return all;
    }

    /** One registry: its API URL and how long it rests. */
    private static final class Target {
        final HttpUrl api;
        /** Failures in a row; 0: it answered last (or was never tried), and does not rest. */
        private volatile int failures;
        /** Until when it rests (System.nanoTime), meaningful while failures is not 0. */
        private volatile long restsUntil;

        Target(HttpUrl api) {
            this.api = api;
        }

        boolean resting(long now) {
            return failures != 0 && now - restsUntil < 0;
        }

        void failed(long now) {
            int f = Math.min(failures + 1, 16);
            restsUntil = now + Math.min(FIRST_REST_NANOS << (f - 1), LONGEST_REST_NANOS);
            failures = f;
        }

        void answered() {
            if (failures != 0) {
                failures = 0;
            }
        }
    }
}
