"""Error codes (protocol.md section 2) and the exceptions that carry them."""


class ErrorCode:
    """The protocol's error codes, as strings: ``GmaError.code`` is one of them."""

    MALFORMED = "MALFORMED"
    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    TOO_LARGE = "TOO_LARGE"
    NO_ROUTE = "NO_ROUTE"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    QUEUE_FULL = "QUEUE_FULL"
    TIMEOUT = "TIMEOUT"
    SHUTTING_DOWN = "SHUTTING_DOWN"
    INTERNAL = "INTERNAL"

    ALL = frozenset([MALFORMED, UNSUPPORTED_VERSION, TOO_LARGE, NO_ROUTE, UNAUTHORIZED, FORBIDDEN,
                     QUEUE_FULL, TIMEOUT, SHUTTING_DOWN, INTERNAL])


class GmaError(Exception):
    """A failure with its protocol error code (``code``) and a sentence that names the value and the limit.

    What it means for delivery is said where it is raised: a send that raises
    was not queued; an ``acknowledged()`` or ``request`` that raises may have
    reached the peer all the same when the code is TIMEOUT or SHUTTING_DOWN.
    """

    def __init__(self, code, sentence):
        super().__init__("%s %s" % (code, sentence))
        self.code = code
        self.sentence = sentence


class ProtocolError(GmaError):
    """Bytes from a peer that break the protocol: the stream can no longer be trusted."""

    def error_text(self):
        """The data of the ERROR that answers it: ``CODE sentence``."""
        return ("%s %s" % (self.code, self.sentence)).encode("utf-8")


def parse_error_text(text, fallback=ErrorCode.INTERNAL):
    """Reads ``CODE sentence`` as Java's ErrorText.parse does: (code, sentence); an unknown code reads as
    ``fallback`` with the whole text as its sentence."""
    space = text.find(" ")
    code = text[:space] if space > 0 else text
    if code not in ErrorCode.ALL:
        return fallback, text
    return code, text[space + 1:] if space > 0 else ""
