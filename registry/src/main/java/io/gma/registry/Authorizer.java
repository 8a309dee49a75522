package io.gma.registry;

/**
 * Decides whether an authenticated identity may do something. The security module provides the rules;
 * without an authorizer, everything is allowed. Called outside any lock and before any database write (a
 * renewal or removal first reads the label and domain it checks).
 */
@FunctionalInterface
public interface Authorizer {
    /** What an identity asks to do, and what the {@code target} of {@link #authorize} is for each. */
    enum Action {
        /**
         * Register, renew or remove an endpoint; target {@code label@domain}, for a renewal or removal the label
         * and domain the registry stored with the name (never guessed from the name's shape).
         */
        REGISTER,
        /** Look up one endpoint; target its registered name. */
        LOOKUP,
        /** Register, renew or remove a domain; target the domain. */
        REGISTER_DOMAIN,
        /**
         * Declare a table (its columns and key); target the table's name. Publishing a table is not an action of
         * its own: it takes {@link #REGISTER} of the producer, as renewing it does.
         */
        DECLARE_TABLE,
        /**
         * Run a query; called once per table or view it reads, target the table's name in lower case. A look-up
         * shows an endpoint's attributes only when this allows target {@code attributes}.
         */
        QUERY
    }

    /**
     * @throws AccessDeniedException if the identity may not; the caller gets 403 with its message
     */
    void authorize(String identity, Action action, String target) throws AccessDeniedException;
}
