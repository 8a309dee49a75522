package io.gma.internal.spool;

/**
 * One message as a spool keeps it.
 *
 * @param seq its number in the spool: every record gets the next one, in the order appended
 * @param arrivalMillis when it arrived (milliseconds since the epoch), so that an old backlog can be told
 * @param lane which of its owner's queues it goes to (the owner's code; the spool only keeps it)
 * @param identity who the sender proved to be when it arrived, so that the checks of the next hop still apply
 *     after a restart (empty: none)
 * @param payload the message's bytes, as they came
 */
public record SpoolRecord(long seq, long arrivalMillis, byte lane, String identity, byte[] payload) {
    /** The bytes this record takes in a spool file. */
    public int storedBytes() {
        return RecordFormat.HEADER_BYTES + RecordFormat.DATA_FIXED_BYTES
                + identity.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + payload.length;
    }
}
