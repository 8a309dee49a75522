package io.gma.pcservlet;

import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;

/**
 * What to answer an HTTP request: a status, a body and its type, Retry-After seconds (0: none), the
 * X-Gma-Batch id of a poll's batch, the X-Gma-Full endpoints of a 429 and the body's Content-Encoding (null:
 * none).
 */
record Answer(int status, String contentType, byte[] body, long retryAfterSeconds, String batchId, String full,
        String encoding) {
    Answer(int status, String contentType, byte[] body, long retryAfterSeconds, String batchId) {
        this(status, contentType, body, retryAfterSeconds, batchId, null, null);
    }

    /** A refusal: {@code CODE sentence} as plain text. */
    static Answer text(int status, ErrorCode code, String sentence) {
        return new Answer(status, "text/plain; charset=utf-8", new ErrorText(code, sentence).toBytes(), 0, null);
    }

    /** A 429 or 503: a refusal that asks the caller to try again after {@code retryAfterSeconds}. */
    static Answer busy(int status, ErrorCode code, String sentence, long retryAfterSeconds) {
        return new Answer(status, "text/plain; charset=utf-8", new ErrorText(code, sentence).toBytes(),
                retryAfterSeconds, null);
    }

    /** This answer with an X-Gma-Full header. */
    Answer withFull(String endpoints) {
        return new Answer(status, contentType, body, retryAfterSeconds, batchId, endpoints, encoding);
    }

    /** This answer with its body compressed as {@code contentEncoding} says. */
    Answer withBody(byte[] encoded, String contentEncoding) {
        return new Answer(status, contentType, encoded, retryAfterSeconds, batchId, full, contentEncoding);
    }
}
