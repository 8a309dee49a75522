package io.gma.client;

import io.gma.tables.TableSchema;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A producer's answers to the table commands that ask (TABLE_QUERY, TABLE_LATEST, TABLE_HISTORY): a REPLY or an
 * ERROR carrying the asking message's sequence, in the control lane. For TABLE_HISTORY, also the two bounds of an
 * answer: the rows the consumer takes, and the bytes a message of this endpoint may hold.
 */
final class TableAnswers {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final String name;
    private final Outbox control;
    private final int maxAnswerBytes;

    TableAnswers(String name, Outbox control, int maxAnswerBytes) {
        this.name = name;
        this.control = control;
        this.maxAnswerBytes = maxAnswerBytes;
    }

    int maxAnswerBytes() {
        return maxAnswerBytes;
    }

    void reply(Message m, byte[] data) {
        try {
            control.sendControl(m.from(), Command.REPLY, m.sequence(), data);
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not answer {} of {}: {}", name, m.command(), m.from(), ex.getMessage());
        }
    }

    void error(Message m, ErrorCode code, String sentence) {
        try {
            control.sendControl(m.from(), Command.ERROR, m.sequence(), new ErrorText(code, sentence).toBytes());
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not report {} to {}: {}", name, code, m.from(), ex.getMessage());
        }
    }

    /** Answers a TABLE_HISTORY with {@code h}, or with TOO_LARGE when it passes the consumer's bound or ours. */
    void history(Message m, TableSchema schema, HistoryWire.Ask ask, int maxRows, TableHistory h) {
        String what = (ask.latest() ? "the latest rows of " : "the history of ") + schema.name() + " since "
                + instant(ask.sinceMicros()) + " that match the query";
        if (h.rows().size() > maxRows) {
            error(m, ErrorCode.TOO_LARGE, what + " are more than " + maxRows + " rows, the most the consumer takes"
                    + " in one answer; narrow the WHERE, shorten the period or add a LIMIT");
            return;
        }
        byte[] data = HistoryWire.answer(schema, h, maxAnswerBytes);
        if (data == null) {
            error(m, ErrorCode.TOO_LARGE, what + " (" + h.rows().size() + " rows) exceed the answer limit of "
                    + maxAnswerBytes + " bytes of " + name + "; narrow the WHERE, shorten the period or add a LIMIT");
            return;
        }
        reply(m, data);
    }

    /** Microseconds since the epoch as an instant, for sentences; any long fits. */
    static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
    }
}
