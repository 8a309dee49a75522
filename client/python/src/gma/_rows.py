"""The binary form of a monitoring table's row, and of TABLE_ROW's data (docs/tables.md, "Rows", "On the
wire")::

    +-----------------------------+---------+---------+-----+
    | nulls bitmap                | value a | value b | ... |   each non-NULL column, in column order
    | ceil(columns / 8) bytes     |         |         |     |
    +-----------------------------+---------+---------+-----+

INTEGER and TIMESTAMP: zigzag, then unsigned LEB128 (minimal, at most 10 bytes); DOUBLE: 8 bytes big-endian;
BOOLEAN: one byte 00 or 01; STRING: a LEB128 length (at most 65,535), then UTF-8. A schema here is a list of
(name, type) and the names of the primary key.
"""

import math
import struct

from ._errors import ErrorCode, ProtocolError

TYPES = ("INTEGER", "DOUBLE", "STRING", "BOOLEAN", "TIMESTAMP")
_DOUBLE = struct.Struct(">d")
_I64 = struct.Struct(">q")
MAX_STRING = 65535


def _bad(sentence):
    return ProtocolError(ErrorCode.MALFORMED, sentence)


class Schema:
    """A table's columns (name, type) in order and its primary key, as the registry's ``GET /tables/{t}``
    gives them."""

    def __init__(self, name, columns, primary_key):
        self.name = name
        self.columns = [(c, t) for c, t in columns]
        self.primary_key = list(primary_key)
        self.index = {c: i for i, (c, _) in enumerate(self.columns)}
        self.key_indexes = [self.index[k] for k in self.primary_key]

    @classmethod
    def from_json(cls, j):
        return cls(j["name"], [(c["name"], c["type"]) for c in j["columns"]], j["primaryKey"])


def read_varint(b, pos, what):
    """An unsigned LEB128 at ``pos``: (value, next position); MALFORMED unless minimal and within 64 bits."""
    value = shift = 0
    start = pos
    while True:
        if pos >= len(b):
            raise _bad("row ends inside the varint of %s" % what)
        byte = b[pos]
        pos += 1
        if pos - start == 10:
            if byte & 0x80:
                raise _bad("the varint of %s is longer than 10 bytes" % what)
            if byte > 1:
                raise _bad("the varint of %s overflows 64 bits" % what)
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if byte == 0 and pos - start > 1:
                raise _bad("the varint of %s is not minimal" % what)
            return value, pos
        shift += 7
        if pos - start >= 10:
            raise _bad("the varint of %s is longer than 10 bytes" % what)


def write_varint(v, out):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def decode_row(schema, b, pos=0):
    """The row's values (a list, None for NULL) from ``b[pos:]``, all of it; MALFORMED otherwise."""
    n = len(schema.columns)
    nb = (n + 7) // 8
    if len(b) - pos < nb:
        raise _bad("row ends inside its nulls bitmap")
    bitmap = int.from_bytes(bytes(b[pos:pos + nb]), "little")
    if bitmap >> n:
        raise _bad("the nulls bitmap sets bit %d, past the last of %d columns" % (bitmap.bit_length() - 1, n))
    for k in schema.key_indexes:
        if bitmap >> k & 1:
            c, t = schema.columns[k]
            raise _bad("key column %s (%s) is NULL" % (c, t))
    pos += nb
    values = []
    for i, (c, t) in enumerate(schema.columns):
        if bitmap >> i & 1:
            values.append(None)
            continue
        what = "column %s (%s)" % (c, t)
        if t == "INTEGER" or t == "TIMESTAMP":
            z, pos = read_varint(b, pos, what)
            values.append((z >> 1) ^ -(z & 1))
        elif t == "DOUBLE":
            if len(b) - pos < 8:
                raise _bad("row ends inside %s at offset %d: 8 bytes needed, %d remain" % (what, pos, len(b) - pos))
            values.append(_DOUBLE.unpack_from(b, pos)[0])
            pos += 8
        elif t == "BOOLEAN":
            if pos >= len(b):
                raise _bad("row ends inside %s" % what)
            if b[pos] > 1:
                raise _bad("%s is 0x%02X, not 0 or 1" % (what, b[pos]))
            values.append(b[pos] == 1)
            pos += 1
        else:
            length, pos = read_varint(b, pos, what)
            if length > MAX_STRING:
                raise _bad("the length of %s is %d, over the limit of %d" % (what, length, MAX_STRING))
            if length > len(b) - pos:
                raise _bad("%s has length %d, but only %d bytes remain" % (what, length, len(b) - pos))
            raw = bytes(b[pos:pos + length])
            try:
                values.append(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise _bad("%s is not valid UTF-8: byte 0x%02X at offset %d" % (what, raw[e.start], pos + e.start)) \
                    from None
            pos += length
    if pos != len(b):
        raise _bad("%d bytes after its last column" % (len(b) - pos))
    return values


def encode_row(schema, values):
    """The row's bytes; ValueError for a value that does not fit its column (a NULL in the key included)."""
    if len(values) != len(schema.columns):
        raise ValueError("table %s has %d columns, not %d" % (schema.name, len(schema.columns), len(values)))
    bitmap = 0
    body = bytearray()
    for i, ((c, t), v) in enumerate(zip(schema.columns, values)):
        if v is None:
            if i in schema.key_indexes:
                raise ValueError("table %s: key column %s is NULL" % (schema.name, c))
            bitmap |= 1 << i
            continue
        if t == "INTEGER" or t == "TIMESTAMP":
            if isinstance(v, bool) or not isinstance(v, int) or not -2 ** 63 <= v < 2 ** 63:
                raise ValueError("table %s: column %s is %s, not %r" % (schema.name, c, t, v))
            write_varint(((v << 1) ^ (v >> 63)) & (2 ** 64 - 1), body)
        elif t == "DOUBLE":
            v = float(v)
            body += b"\x7f\xf8\x00\x00\x00\x00\x00\x00" if math.isnan(v) else _DOUBLE.pack(v)
        elif t == "BOOLEAN":
            if not isinstance(v, bool):
                raise ValueError("table %s: column %s is BOOLEAN, not %r" % (schema.name, c, v))
            body.append(1 if v else 0)
        else:
            raw = str(v).encode("utf-8")
            if len(raw) > MAX_STRING:
                raise ValueError("table %s: column %s holds %d bytes, over %d" % (schema.name, c, len(raw), MAX_STRING))
            write_varint(len(raw), body)
            body += raw
    return bitmap.to_bytes((len(schema.columns) + 7) // 8, "little") + bytes(body)


def decode_envelope(b):
    """TABLE_ROW's data: (queryId, insertMicros, the row's bytes)."""
    qid, pos = read_varint(b, 0, "the query id")
    if len(b) - pos < 8:
        raise _bad("TABLE_ROW ends before its row: %d bytes after the query id, 8 needed for the insert time"
                   % (len(b) - pos))
    return qid, _I64.unpack_from(b, pos)[0], memoryview(b)[pos + 8:]


def decode_batch(schema, b):
    """TABLE_ROWS' data: (queryId, its rows), the query's schema being ``schema(queryId)``. The rows are an
    iterator of (insertMicros, values), each decoded as it is taken, so that a fault (MALFORMED) comes after the
    rows before it; None for a query this consumer does not know (``schema`` gave None): they are not decoded."""
    qid, pos = read_varint(b, 0, "the query id")
    if pos == len(b):
        raise _bad("TABLE_ROWS holds no row after its query id")
    s = schema(qid)
    return qid, (None if s is None else _rows_from(s, b, pos, "a batch row"))


def decode_latest(schema, b):
    """TABLE_LATEST's REPLY: a list of (insertMicros, values)."""
    return list(_rows_from(schema, b, 0, "a latest row"))


def _rows_from(schema, b, pos, what):
    """Rows one after another from ``pos`` to the end, each its insert time, its length and its bytes: yields
    (insertMicros, values) as each is decoded."""
    while pos < len(b):
        if len(b) - pos < 8:
            raise _bad("%s ends inside its insert time" % what)
        at = _I64.unpack_from(b, pos)[0]
        length, pos = read_varint(b, pos + 8, "%s's length" % what)
        if length > len(b) - pos:
            raise _bad("%s of %d bytes, but only %d remain" % (what, length, len(b) - pos))
        values = decode_row(schema, memoryview(b)[pos:pos + length])
        pos += length
        yield at, values


def varint(v):
    out = bytearray()
    write_varint(v, out)
    return bytes(out)
