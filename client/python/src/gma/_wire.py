"""The GMA/1 message and its codec (protocol.md sections 1 and 2).

A message is one packed byte array that describes its own length, so a stream
is messages back to back::

     0      2     3     4     5   6   7      8                16       20
    +------+-----+-----+-----+---+---+------+----------------+--------+------+----+------+
    | 'GM' | ver | cmd | flg | F | T | rsvd | sequence (u64) | D (u32)| from | to | data |
    +------+-----+-----+-----+---+---+------+----------------+--------+------+----+------+
                                                                       F      T    D bytes

The checks on receipt run in the order a stream reveals the bytes, as the Java
side's ``Layout`` does (docs/protocol-choices.md): magic, version, command,
dataLength against the limit, the per-command rules on F, T and D, then strict
UTF-8 of the names. A bad byte is refused before anything is allocated for the
message.
"""

import struct

from ._errors import ErrorCode, ProtocolError

MAGIC = b"GM"
VERSION = 1
HEADER_BYTES = 20
MAX_NAME_BYTES = 255
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: The data a peer may send before the handshake is over (HELLO's credentials).
HANDSHAKE_MAX_DATA = 4096
REPLY_EXPECTED = 0x01

_HEADER = struct.Struct(">2sBBBBBBQI")


class Command:
    """Command codes (protocol.md section 2); 0x40..0xFF are the application's."""

    DATA = 0x01
    REQUEST = 0x02
    REPLY = 0x03
    ERROR = 0x04
    SUBSCRIBE = 0x05
    UNSUBSCRIBE = 0x06
    HELLO = 0x10
    WELCOME = 0x11
    PING = 0x12
    PONG = 0x13
    ACK = 0x14
    BYE = 0x15
    #: Monitoring tables (docs/tables.md), taken by the endpoint itself.
    TABLE_ROW = 0x40
    TABLE_QUERY = 0x41
    TABLE_CANCEL = 0x42
    TABLE_LATEST = 0x43
    TABLE_HISTORY = 0x44
    TABLE_ROWS = 0x45

    _NAMES = {
        0x01: "DATA", 0x02: "REQUEST", 0x03: "REPLY", 0x04: "ERROR", 0x05: "SUBSCRIBE",
        0x06: "UNSUBSCRIBE", 0x10: "HELLO", 0x11: "WELCOME", 0x12: "PING", 0x13: "PONG",
        0x14: "ACK", 0x15: "BYE",
    }

    @staticmethod
    def known(code):
        """Whether ``code`` is a command of version 1 (the rest are reserved: MALFORMED)."""
        return code in Command._NAMES or 0x40 <= code <= 0xFF

    @staticmethod
    def name(code):
        """The command's name as Java prints it: DATA, or 0x41 for an application command."""
        return Command._NAMES.get(code) or "0x%02X" % code

    @staticmethod
    def requires_names(code):
        """DATA, REQUEST, REPLY, SUBSCRIBE, UNSUBSCRIBE and application commands need both names."""
        return (code <= Command.UNSUBSCRIBE and code != Command.ERROR) or code >= 0x40


class Message:
    """One GMA message: an immutable value. ``data`` is bytes, owned by the message."""

    __slots__ = ("command", "flags", "sender", "to", "sequence", "data")

    def __init__(self, command, sender, to, sequence, data=b"", flags=None):
        self.command = command
        self.sender = sender
        self.to = to
        self.sequence = sequence
        self.data = bytes(data)
        self.flags = (REPLY_EXPECTED if command == Command.REQUEST else 0) if flags is None else flags

    @property
    def reply_expected(self):
        return bool(self.flags & REPLY_EXPECTED)

    def text(self):
        """The data as UTF-8 text (malformed bytes become U+FFFD, as Java's dataAsString)."""
        return self.data.decode("utf-8", "replace")

    def encode(self):
        """The message's bytes on the wire."""
        return pack(self.sequence, self.command, self.sender, self.to, self.data, self.flags)

    def __eq__(self, other):
        return isinstance(other, Message) and all(
            getattr(self, f) == getattr(other, f) for f in Message.__slots__)

    def __repr__(self):
        return "Message(%s %r -> %r #%d, %d bytes)" % (
            Command.name(self.command), self.sender, self.to, self.sequence, len(self.data))


_KNOWN = [Command.known(c) for c in range(256)]
_new_message = object.__new__


def encode_name(field, name):
    """A name's UTF-8 bytes; refuses a lone surrogate and a name over 255 bytes (misuse: ValueError)."""
    try:
        b = name.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("%s has an unpaired surrogate U+%04X at index %d"
                         % (field, ord(name[e.start]), e.start)) from None
    if len(b) > MAX_NAME_BYTES:
        raise ValueError("%s is %d bytes in UTF-8, over the limit of %d" % (field, len(b), MAX_NAME_BYTES))
    return b


def pack(sequence, command, sender, to, data=b"", flags=None):
    """Packs one message; ``sender`` and ``to`` are str or their UTF-8 bytes.

    Raises ValueError for what a sender must not send (a name too long, the
    per-command rules on lengths), as Java's Message refuses it.
    """
    f = sender if isinstance(sender, bytes) else encode_name("from", sender)
    t = to if isinstance(to, bytes) else encode_name("to", to)
    if flags is None:
        flags = REPLY_EXPECTED if command == Command.REQUEST else 0
    if not Command.known(command):
        raise ValueError("command 0x%02X is reserved" % command)
    _check_fields(command, len(f), len(t), len(data), ValueError)
    return _HEADER.pack(MAGIC, VERSION, command, flags & REPLY_EXPECTED, len(f), len(t), 0,
                        sequence, len(data)) + f + t + data


def _not_gma(first_two):
    if first_two == b"HT":
        return ("this is an HTTP server, not a GMA stream (a PC servlet's uplinks are on its --uplink-port,"
                " not its --http-port)")
    if len(first_two) == 2 and first_two[0] in (0x15, 0x16) and first_two[1] == 0x03:
        return ("this is TLS, not a plaintext GMA stream (this side needs TLS too: --security DIR, or"
                " Security with TLS)")
    return "this is not a GMA stream"


def check_prefix(b, available):
    """Checks the first ``available`` header bytes (fewer than 20 allowed): magic, version, command."""
    if (available >= 1 and b[0] != 0x47) or (available >= 2 and b[1] != 0x4D):
        seen = (b[0] << 8 | b[1]) if available >= 2 else b[0] << 8
        raise ProtocolError(ErrorCode.MALFORMED, 'magic 0x%04X is not 0x474D ("GM"): %s'
                            % (seen, _not_gma(bytes(b[:2]) if available >= 2 else b"")))
    if available > 2 and b[2] != VERSION:
        raise ProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                            "version %d is not supported (this side speaks version %d)" % (b[2], VERSION))
    if available > 3 and not Command.known(b[3]):
        raise ProtocolError(ErrorCode.MALFORMED, "command 0x%02X is reserved" % b[3])


def _check_fields(command, f, t, d, error):
    if Command.requires_names(command):
        if f == 0:
            raise error(Command.name(command) + " needs a sender name, but fromLength is 0")
        if t == 0:
            raise error(Command.name(command) + " needs a destination name, but toLength is 0")
    if command == Command.HELLO and t != 0:
        raise error("HELLO must have an empty destination, but toLength is %d" % t)
    if command == Command.ACK and d != 8:
        raise error("ACK dataLength %d is not 8" % d)


def _malformed(sentence):
    return ProtocolError(ErrorCode.MALFORMED, sentence)


def check_header(b, max_data, handshake=False):
    """Checks a whole 20-byte header against the protocol and the limit; the message's total length."""
    check_prefix(b, HEADER_BYTES)
    _, _, command, _, f, t, _, _, d = _HEADER.unpack_from(b)
    if d > max_data:
        raise ProtocolError(ErrorCode.TOO_LARGE, (
            "dataLength %d exceeds %d, the limit until the handshake is over" if handshake
            else "dataLength %d exceeds maxMessageBytes %d") % (d, max_data))
    _check_fields(command, f, t, d, _malformed)
    return HEADER_BYTES + f + t + d


def _name(field, b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtocolError(ErrorCode.MALFORMED, "%s is not valid UTF-8: byte 0x%02X at offset %d of %d"
                            % (field, b[e.start], e.start, len(b))) from None


def from_checked(b):
    """A message from bytes whose header was checked and whose length is right."""
    _, _, command, flags, f, t, _, seq, _ = _HEADER.unpack_from(b)
    sender = _name("from", bytes(b[20:20 + f]))
    to = _name("to", bytes(b[20 + f:20 + f + t]))
    m = Message.__new__(Message)
    m.command = command
    m.flags = flags & REPLY_EXPECTED
    m.sender = sender
    m.to = to
    m.sequence = seq
    m.data = bytes(b[20 + f + t:])
    return m


def decode(b, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES):
    """Decodes bytes holding exactly one message; ProtocolError otherwise."""
    b = bytes(b)
    check_prefix(b, min(len(b), HEADER_BYTES))
    if len(b) < HEADER_BYTES:
        raise _malformed("truncated message: %d bytes, the header alone is %d" % (len(b), HEADER_BYTES))
    total = check_header(b, max_message_bytes)
    if total > len(b):
        raise _malformed("truncated message: %d of the %d bytes its header announces" % (len(b), total))
    if total < len(b):
        raise _malformed("%d bytes follow the %d-byte message; decode takes exactly one (use a StreamDecoder)"
                         % (len(b) - total, total))
    return from_checked(b)


class StreamDecoder:
    """Decodes a stream fed in pieces of any size, messages back to back.

    With ``handshake_max_data``, data longer than that is refused until
    :meth:`end_handshake`, as a link does before its peer authenticated. It
    never allocates more than a checked header promises.
    """

    def __init__(self, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, handshake_max_data=None):
        self._max = max_message_bytes
        self._handshake = handshake_max_data is not None
        self._limit = min(handshake_max_data, max_message_bytes) if self._handshake else max_message_bytes
        self._buf = bytearray()
        self._names = {}  # name bytes -> str, checked once

    def end_handshake(self):
        self._handshake = False
        self._limit = self._max

    def buffered(self):
        return len(self._buf)

    def feed(self, chunk):
        """Feeds bytes; returns the messages completed, in order. Raises ProtocolError at the first bad one,
        after which the stream cannot be trusted (the messages before it were returned by earlier calls only:
        use :meth:`feed_each` to have them all)."""
        out = []
        self.feed_each(chunk, out.append)
        return out

    def feed_each(self, chunk, sink):
        """Feeds bytes and calls ``sink(message)`` for each message completed, before a bad one raises.

        The common case runs inline: one struct unpack of the header, the checks in the order the bytes
        came (any failure goes to the full checks, which say why), and names decoded once per distinct
        byte string (a link's messages repeat the same two names)."""
        buf = self._buf
        if buf:
            buf += chunk
            data = buf
        else:
            data = chunk
        n = len(data)
        pos = 0
        unpack = _HEADER.unpack_from
        names = self._names
        known = _KNOWN
        try:
            while True:
                avail = n - pos
                if avail < HEADER_BYTES:
                    if avail:
                        check_prefix(memoryview(data)[pos:], avail)
                    break
                magic, version, command, flags, f, t, _, seq, d = unpack(data, pos)
                if (magic != MAGIC or version != VERSION or not known[command] or d > self._limit
                        or ((f == 0 or t == 0) and Command.requires_names(command))
                        or command == Command.HELLO or command == Command.ACK and d != 8):
                    check_header(memoryview(data)[pos:pos + HEADER_BYTES], self._limit, self._handshake)
                total = HEADER_BYTES + f + t + d
                if avail < total:
                    break
                p = pos + HEADER_BYTES
                fb = bytes(data[p:p + f])
                sender = names.get(fb)
                if sender is None:
                    sender = _name("from", fb)
                    if len(names) > 64:
                        names.clear()
                    names[fb] = sender
                tb = bytes(data[p + f:p + f + t])
                to = names.get(tb)
                if to is None:
                    to = _name("to", tb)
                    if len(names) > 64:
                        names.clear()
                    names[tb] = to
                m = _new_message(Message)
                m.command = command
                m.flags = flags & REPLY_EXPECTED
                m.sender = sender
                m.to = to
                m.sequence = seq
                m.data = bytes(data[p + f + t:pos + total])
                pos += total
                sink(m)
        finally:
            if data is buf:
                del buf[:pos]
            else:
                self._buf = bytearray(data[pos:]) if pos < n else bytearray()

    def finish(self):
        """The stream ended: MALFORMED if it ended inside a message."""
        n = len(self._buf)
        if n >= HEADER_BYTES:
            total = check_header(self._buf[:HEADER_BYTES], self._limit, self._handshake)
            raise _malformed("stream ended inside a message: %d of its %d bytes arrived" % (n, total))
        if n:
            raise _malformed("stream ended inside a header: %d of its %d bytes arrived" % (n, HEADER_BYTES))
