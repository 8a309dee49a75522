package io.gma.pcservlet;

/**
 * The HTTP tunnel's names (protocol.md section 6): its path, its headers and its media type, as both sides of
 * it write them, the {@link TunnelServlet} that answers and the {@link Forwarder} and {@link Poller} that call.
 */
final class Tunnel {
    /** POST a batch; GET a long poll of a relayed domain. */
    static final String MESSAGES_PATH = "/gma/v1/messages";
    /** The posting or polling domain. */
    static final String DOMAIN_HEADER = "X-Gma-Domain";
    /** The id of a poll's batch, which the next poll acknowledges. */
    static final String BATCH_HEADER = "X-Gma-Batch";
    /** On a 429: the endpoints whose queues are full (an addition to protocol.md section 6). */
    static final String FULL_HEADER = "X-Gma-Full";
    /**
     * On a POST: where the batch stands in its sender's numbering, {@code stream/epoch/batch}, so that several
     * may be in flight at once ({@link StreamOrder}; an extension of protocol.md section 6).
     */
    static final String STREAM_HEADER = "X-Gma-Stream";
    /** On the answer to a POST that had {@link #STREAM_HEADER}: how many batches the receiver lets be in flight. */
    static final String WINDOW_HEADER = "X-Gma-Window";
    /** Batches, messages back to back. */
    static final String MEDIA_TYPE = "application/x-gma";
    /** This PC servlet's version, on its status page. */
    static final String VERSION = "0.1.0";

    private Tunnel() {
    }

    /** Whether a Content-Type header names a batch: {@link #MEDIA_TYPE}, in any case, with any parameters. */
    static boolean isBatch(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String type = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim();
        return type.equalsIgnoreCase(MEDIA_TYPE);
    }
}
