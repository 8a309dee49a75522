package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NameTest {
    private static String refusal(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void labelIsOneToSixtyFourOfLettersDigitsDotUnderscoreHyphen() {
        assertTrue(Name.isLabel("a"));
        assertTrue(Name.isLabel("cpu.load_1-x"));
        assertTrue(Name.isLabel("x".repeat(64)));
        assertFalse(Name.isLabel("x".repeat(65)));
        assertFalse(Name.isLabel(""));
        assertFalse(Name.isLabel(null));
        for (String bad : new String[] {"a b", "a@b", "a/b", "a+b", "caf\u00e9", "a\n"}) {
            assertFalse(Name.isLabel(bad), bad);
        }
    }

    @Test
    void domainIsOneToSixtyFourOfLettersDigitsDotHyphen() {
        assertTrue(Name.isDomain("dsg"));
        assertTrue(Name.isDomain("east-1.example.org"));
        assertTrue(Name.isDomain("d".repeat(64)));
        assertFalse(Name.isDomain("d".repeat(65)));
        assertFalse(Name.isDomain(""));
        assertFalse(Name.isDomain(null));
        for (String bad : new String[] {"d_x", "d@x", "d x", "no such/domain", "\u00e9"}) {
            assertFalse(Name.isDomain(bad), bad);
        }
    }

    @Test
    void nonceIsSixOfLowerCaseBase32() {
        assertTrue(Name.isNonce("7x2kqa"));
        assertTrue(Name.isNonce("abc234"));
        assertFalse(Name.isNonce("abc23"));
        assertFalse(Name.isNonce("abc2345"));
        assertFalse(Name.isNonce("ABCDEF"));
        assertFalse(Name.isNonce("abc018")); // 0, 1 and 8 are not base32
        assertFalse(Name.isNonce(null));
    }

    @Test
    void nameIsLabelWithOptionalNonceAtDomain() {
        assertTrue(Name.isName("cpu-7x2kqa@dsg"));
        assertTrue(Name.isName("pc@dsg"));
        assertTrue(Name.isName("x".repeat(64) + "@" + "d".repeat(64)));
        // a 64-character label may have its nonce after it
        assertTrue(Name.isName("x".repeat(64) + "-abcdef@dsg"));
        assertFalse(Name.isName("x".repeat(65) + "@dsg"));
        assertFalse(Name.isName("x".repeat(64) + "-ABCDEF@dsg"));
        assertFalse(Name.isName("cpu@" + "d".repeat(65)));
        assertFalse(Name.isName("cpu@"));
        assertFalse(Name.isName("@dsg"));
        assertFalse(Name.isName("cpu"));
        assertFalse(Name.isName("cpu@d@x"));
        assertFalse(Name.isName("cpu@d_x"));
        assertFalse(Name.isName(null));
    }

    @Test
    void requireLabelNamesTheFieldTheValueAndTheRule() {
        assertEquals("cpu", Name.requireLabel("label", "cpu"));
        assertEquals("label \"a b\" is not 1..64 of [A-Za-z0-9._-]", refusal(() -> Name.requireLabel("label", "a b")));
        assertEquals("label \"" + "x".repeat(65) + "\" is not 1..64 of [A-Za-z0-9._-]",
                refusal(() -> Name.requireLabel("label", "x".repeat(65))));
        assertEquals("label \"null\" is not 1..64 of [A-Za-z0-9._-]", refusal(() -> Name.requireLabel("label", null)));
    }

    @Test
    void requireDomainNamesTheFieldTheValueAndTheRule() {
        String d64 = "d".repeat(64);
        assertSame(d64, Name.requireDomain("domain", d64));
        assertEquals("domain \"d@x\" is not 1..64 of [A-Za-z0-9.-]",
                refusal(() -> Name.requireDomain("domain", "d@x")));
        assertEquals("via \"\" is not 1..64 of [A-Za-z0-9.-]", refusal(() -> Name.requireDomain("via", "")));
        assertEquals("domain \"null\" is not 1..64 of [A-Za-z0-9.-]",
                refusal(() -> Name.requireDomain("domain", null)));
    }

    @Test
    void domainOfIsThePartAfterTheLastAt() {
        assertEquals("dsg", Name.domainOf("cpu-7x2kqa@dsg"));
        assertEquals("x", Name.domainOf("a@b@x"));
        assertEquals("", Name.domainOf("cpu@"));
        assertEquals("nodomain", Name.domainOf("nodomain"));
        assertThrows(NullPointerException.class, () -> Name.domainOf(null));
    }

    @Test
    void pcServletOfADomainIsPcAtTheDomain() {
        assertEquals("pc@dsg", Name.pcServlet("dsg"));
        assertEquals("dsg", Name.domainOf(Name.pcServlet("dsg")));
        assertTrue(Name.isName(Name.pcServlet("east-1.example.org")));
    }

    @Test
    void rulesSayWhatThePatternsAccept() {
        assertEquals("1..64 of [A-Za-z0-9._-]", Name.LABEL_RULE);
        assertEquals("1..64 of [A-Za-z0-9.-]", Name.DOMAIN_RULE);
        assertEquals("6 of [a-z2-7]", Name.NONCE_RULE);
        assertEquals("<label>[-<nonce>]@<domain>", Name.NAME_RULE);
        assertEquals(6, Name.NONCE_LENGTH);
    }

    @Test
    void isDomainAgreesWithTheRuleAsARegexOnEveryCharacterAndLength() {
        java.util.regex.Pattern rule = java.util.regex.Pattern.compile("[A-Za-z0-9.-]{1,64}");
        java.util.Random random = new java.util.Random(20261126);
        for (char c = 0; c < 0x3000; c++) {
            String one = "ab" + c + "cd";
            assertEquals(rule.matcher(one).matches(), Name.isDomain(one), "character " + (int) c);
        }
        String alphabet = "aZ09.-_@ \u00e9";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int n = random.nextInt(70); n > 0; n--) {
                b.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            assertEquals(rule.matcher(b).matches(), Name.isDomain(b.toString()), b.toString());
        }
    }

    @Test
    void inDomainIsDomainOfEqualsWithoutTheSubstring() {
        String[] names = {"cpu-7x2kqa@dsg", "pc@dsg", "a@b@dsg", "x@dsgx", "x@xdsg", "dsg", "@dsg", "x@", "", "x@ds"};
        for (String name : names) {
            for (String domain : new String[] {"dsg", "x", "ds"}) {
                assertEquals(Name.domainOf(name).equals(domain), Name.inDomain(name, domain), name + " in " + domain);
            }
        }
    }
}
