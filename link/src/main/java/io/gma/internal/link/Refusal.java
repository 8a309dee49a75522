package io.gma.internal.link;

import io.gma.wire.ErrorCode;

/**
 * Why a peer may not have a link, as the ERROR that refuses it says: FORBIDDEN or UNAUTHORIZED (a setting to
 * fix; the peer fails what it queued for us), or INTERNAL (the check could not be made now; the peer tries
 * again later).
 */
public record Refusal(ErrorCode code, String sentence) {
    /** A FORBIDDEN refusal. */
    public static Refusal forbidden(String sentence) {
        return new Refusal(ErrorCode.FORBIDDEN, sentence);
    }
}
