package io.gma.registry;

import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;

/**
 * The registry's actions checked against a {@link Security}'s rules, default deny:
 *
 * <pre>
 *   REGISTER         register label@domain   (also renewing and removing the endpoint)
 *   REGISTER_DOMAIN  domain   the domain     (also renewing and removing it)
 *   DECLARE_TABLE    table    the table's name (publishing a table takes register of the producer)
 *   QUERY            query    each table or view the statement reads
 *   LOOKUP           send     the endpoint's name, or query endpoints (which shows every name anyway)
 * </pre>
 */
final class RulesAuthorizer implements Authorizer {
    private final Security security;

    RulesAuthorizer(Security security) {
        this.security = security;
    }

    /** Who is calling, from the Authorization header or the client certificate: 401 without either. */
    static Authenticator authenticator(Security security) {
        return request -> {
            try {
                return Https.caller(request, security, Security.REGISTRY_AUDIENCE);
            } catch (AuthException e) {
                throw new AccessDeniedException(e.getMessage());
            }
        };
    }

    @Override
    public void authorize(String identity, Action action, String target) throws AccessDeniedException {
        try {
            switch (action) {
                case REGISTER -> security.authorize(identity, Rules.Verb.REGISTER, target);
                case REGISTER_DOMAIN -> security.authorize(identity, Rules.Verb.DOMAIN, target);
                case DECLARE_TABLE -> security.authorize(identity, Rules.Verb.TABLE, target);
                case QUERY -> security.authorize(identity, Rules.Verb.QUERY, target);
                case LOOKUP -> {
                    if (!security.allows(identity, Rules.Verb.QUERY, "endpoints")) {
                        security.authorize(identity, Rules.Verb.SEND, target);
                    }
                }
                default -> throw new IllegalStateException("no rule verb for " + action);
            }
        } catch (AuthException e) {
            String also = action == Action.LOOKUP ? " (looking up an endpoint takes a send rule for its name or a"
                    + " query rule for the table endpoints)" : "";
            throw new AccessDeniedException(e.getMessage() + also);
        }
    }
}
