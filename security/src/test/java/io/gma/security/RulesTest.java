package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.security.Rules.Verb;
import org.junit.jupiter.api.Test;

class RulesTest {
    private static final Rules RULES = Rules.parse("""
            # agents register cpu and mem probes in dsg; the collector reads
            register  agent-*     cpu-*@dsg,mem-*@dsg
            domain    dsg         dsg
            send      alice       *@dsg        # alice may send to anything in dsg
            send      /bob|carol/ /pong-[0-9]+@dsg/
            post      cardiff     cardiff
            query     *           endpoints,domains
            """, "rules");

    @Test
    void globsListsAndRegularExpressionsMatchWholeValues() {
        assertTrue(RULES.allows("agent-7", Verb.REGISTER, "cpu-x@dsg"));
        assertTrue(RULES.allows("agent-7", Verb.REGISTER, "mem-x@dsg"));
        assertFalse(RULES.allows("agent-7", Verb.REGISTER, "cpu-x@dsg.evil"));
        assertFalse(RULES.allows("xagent-7", Verb.REGISTER, "cpu-x@dsg"));
        assertTrue(RULES.allows("alice", Verb.SEND, "pong-1@dsg"));
        assertTrue(RULES.allows("carol", Verb.SEND, "pong-12@dsg"));
        assertFalse(RULES.allows("carol", Verb.SEND, "pong-x@dsg"));
        assertFalse(RULES.allows("bobby", Verb.SEND, "pong-1@dsg"), "a regular expression matches the whole value");
        assertTrue(RULES.allows("anyone", Verb.QUERY, "domains"));
        assertFalse(RULES.allows("anyone", Verb.QUERY, "attributes"));
        assertTrue(RULES.allows("cardiff", Verb.POST, "cardiff"));
        assertFalse(RULES.allows("cardiff", Verb.POST, "swansea"));
        assertFalse(RULES.allows("alice", Verb.DOMAIN, "dsg"), "a rule allows one verb only");
        assertTrue(RULES.allows("dsg", Verb.DOMAIN, "dsg"));
        assertEquals(6, RULES.size());
    }

    @Test
    void dotsAndOtherCharactersInGlobsAreLiteral() {
        Rules r = Rules.parse("send a.b x?y", "t");
        assertTrue(r.allows("a.b", Verb.SEND, "x-y"));
        assertFalse(r.allows("aXb", Verb.SEND, "x-y"));
        assertFalse(r.allows("a.b", Verb.SEND, "xy"));
    }

    @Test
    void anythingNoRuleAllowsIsRefusedWithASentence() {
        assertNull(RULES.refusal("alice", Verb.SEND, "x@dsg"));
        assertEquals("\"bob\" may not send to \"x@dsg\": no send rule in rules allows it",
                RULES.refusal("bob", Verb.SEND, "x@dsg"));
        assertEquals("\"bob\" may not query the table \"attributes\": no query rule in rules allows it",
                RULES.refusal("bob", Verb.QUERY, "attributes"));
        assertFalse(Rules.denyAll().allows("root", Verb.QUERY, "endpoints"));
    }

    @Test
    void badLinesAreNamedWithTheirNumber() {
        assertEquals("r line 2: unknown verb \"sned\" (register, domain, send, post, query or table)",
                assertThrows(IllegalArgumentException.class, () -> Rules.parse("\nsned a b", "r")).getMessage());
        assertEquals("r line 1: expected 'verb identity target', got 2 words",
                assertThrows(IllegalArgumentException.class, () -> Rules.parse("send a", "r")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Rules.parse("send /[/ x", "r"))
                .getMessage().startsWith("r line 1: bad regular expression /[/"));
        assertEquals("r line 1: empty item in \"a,,b\"",
                assertThrows(IllegalArgumentException.class, () -> Rules.parse("send a,,b x", "r")).getMessage());
    }
}
