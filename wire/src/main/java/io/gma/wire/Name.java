package io.gma.wire;

import java.util.regex.Pattern;

/**
 * The name grammar of protocol.md section 3, in one place. A registered name is a label the endpoint chose,
 * a nonce the registry added (none for an exact name) and the domain that routes it:
 *
 * <pre>
 *   cpu-7x2kqa@dsg        pc@dsg
 *   \_/ \____/ \_/        \/ \_/
 *  label nonce domain  label domain  (the PC servlet of dsg: an exact name)
 * </pre>
 *
 * <p>Whether a name carries a nonce is known only from the registration that made it: {@code x-abc234@east}
 * may be the exact label {@code x-abc234}, so nothing here takes a name apart into label and nonce. Routing
 * needs only {@link #domainOf(String)}.
 *
 * <p>The {@code is...} tests take null and answer false; the {@code require...} checks refuse a bad value
 * with an {@link IllegalArgumentException} whose message names the field, the value and the rule, as
 * {@code label "a b" is not 1..64 of [A-Za-z0-9._-]}.
 */
public final class Name {
    /** The length of a nonce, in characters. */
    public static final int NONCE_LENGTH = 6;

    /** What a label is, as error messages say it. */
    public static final String LABEL_RULE = "1..64 of [A-Za-z0-9._-]";
    /** What a nonce is, as error messages say it. */
    public static final String NONCE_RULE = "6 of [a-z2-7]";
    /** What a domain is, as error messages say it. */
    public static final String DOMAIN_RULE = "1..64 of [A-Za-z0-9.-]";
    /** What a registered name is, as error messages say it. */
    public static final String NAME_RULE = "<label>[-<nonce>]@<domain>";

    private static final String LABEL_REGEX = "[A-Za-z0-9._-]{1,64}";
    private static final String NONCE_REGEX = "[a-z2-7]{6}";
    private static final String DOMAIN_REGEX = "[A-Za-z0-9.-]{1,64}";
    private static final Pattern LABEL = Pattern.compile(LABEL_REGEX);
    private static final Pattern NONCE = Pattern.compile(NONCE_REGEX);
    private static final Pattern NAME = Pattern.compile(LABEL_REGEX + "(-" + NONCE_REGEX + ")?@" + DOMAIN_REGEX);

    private Name() {
    }

    /** Whether {@code value} is a label: {@value #LABEL_RULE}, as {@code cpu}. False for null. */
    public static boolean isLabel(String value) {
        return value != null && LABEL.matcher(value).matches();
    }

    /** Whether {@code value} is a nonce: {@value #NONCE_RULE}, as {@code 7x2kqa}. False for null. */
    public static boolean isNonce(String value) {
        return value != null && NONCE.matcher(value).matches();
    }

    /** Whether {@code value} is a domain: {@value #DOMAIN_RULE}, as {@code dsg}. False for null. */
    public static boolean isDomain(String value) {
        // by hand, not DOMAIN's matcher: a PC servlet asks this of every message it routes to another domain
        if (value == null || value.isEmpty() || value.length() > 64) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code name} is in {@code domain}: {@code domainOf(name).equals(domain)} for a domain (which has no
     * {@code @}), without making the substring.
     */
    public static boolean inDomain(String name, String domain) {
        int at = name.length() - domain.length() - 1;
        return at >= 0 ? name.charAt(at) == '@' && name.endsWith(domain) : name.equals(domain); // no @: all of it
    }

    /**
     * Whether {@code value} has the shape of a registered name, {@value #NAME_RULE}, as {@code cpu-7x2kqa@dsg}
     * or {@code pc@dsg}. The label may be up to 64 characters before the nonce. False for null.
     */
    public static boolean isName(String value) {
        return value != null && NAME.matcher(value).matches();
    }

    /**
     * Checks a label.
     *
     * @param field what the value is, for the message: {@code "label"}
     * @return {@code value}
     * @throws IllegalArgumentException if it is null or not {@value #LABEL_RULE}, as
     *     {@code label "a b" is not 1..64 of [A-Za-z0-9._-]}
     */
    public static String requireLabel(String field, String value) {
        return require(isLabel(value), field, value, LABEL_RULE);
    }

    /**
     * Checks a domain.
     *
     * @param field what the value is, for the message: {@code "domain"}
     * @return {@code value}
     * @throws IllegalArgumentException if it is null or not {@value #DOMAIN_RULE}, as
     *     {@code domain "d@x" is not 1..64 of [A-Za-z0-9.-]}
     */
    public static String requireDomain(String field, String value) {
        return require(isDomain(value), field, value, DOMAIN_RULE);
    }

    private static String require(boolean valid, String field, String value, String rule) {
        if (!valid) {
            throw new IllegalArgumentException(field + " \"" + value + "\" is not " + rule);
        }
        return value;
    }

    /**
     * The domain that routes a name: the part after its last {@code @}, as {@code dsg} for
     * {@code cpu-7x2kqa@dsg}. A name without {@code @} is all domain. The result is not checked against
     * {@link #isDomain(String)}.
     *
     * @throws NullPointerException if {@code name} is null
     */
    public static String domainOf(String name) {
        return name.substring(name.lastIndexOf('@') + 1);
    }

    /**
     * The name the PC servlet of {@code domain} goes by (in WELCOME, and as the sender of what it reports):
     * {@code pc@<domain>}, an exact name, as {@code pc@dsg}. The domain is not checked.
     */
    public static String pcServlet(String domain) {
        return "pc@" + domain;
    }
}
