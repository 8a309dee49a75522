"""Every vector of wire's messages.json: encode, decode, each invalid one with its code, the stream in pieces."""

import json
import os
import random

import pytest

from gma import _wire
from gma._errors import ErrorCode, ProtocolError

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "..", "..", "wire", "src", "test", "resources", "vectors", "messages.json")

with open(VECTORS, encoding="utf-8") as _f:
    V = json.load(_f)


@pytest.mark.parametrize("v", V["valid"], ids=lambda v: v["name"])
def test_encodes_every_valid_vector(v):
    b = _wire.pack(v["sequence"], v["command"], v["from"], v["to"], bytes.fromhex(v["dataHex"]), v["flags"])
    assert b.hex() == v["hex"]


@pytest.mark.parametrize("v", V["valid"], ids=lambda v: v["name"])
def test_decodes_every_valid_vector(v):
    m = _wire.decode(bytes.fromhex(v["hex"]))
    assert (m.command, m.flags, m.sender, m.to, m.sequence, m.data.hex()) == (
        v["command"], v["flags"], v["from"], v["to"], v["sequence"], v["dataHex"])
    assert m.encode().hex() == v["hex"]


@pytest.mark.parametrize("v", V["invalid"], ids=lambda v: v["name"])
def test_refuses_every_invalid_vector_with_its_code(v):
    with pytest.raises(ProtocolError) as e:
        _wire.decode(bytes.fromhex(v["hex"]))
    assert e.value.code == v["error"]


@pytest.mark.parametrize("v", V["invalid"], ids=lambda v: v["name"])
def test_stream_refuses_every_invalid_vector_with_its_code(v):
    d = _wire.StreamDecoder()
    with pytest.raises(ProtocolError) as e:
        for b in bytes.fromhex(v["hex"]):
            d.feed(bytes([b]))
        d.finish()
    assert e.value.code == v["error"]


def test_too_large_is_refused_from_the_header_alone():
    v = [x for x in V["invalid"] if x["name"] == "too-large"][0]
    d = _wire.StreamDecoder()
    with pytest.raises(ProtocolError) as e:
        d.feed(bytes.fromhex(v["hex"])[:20])
    assert e.value.sentence == "dataLength 2147483648 exceeds maxMessageBytes 16777216"


def test_sentences_are_javas():
    bad = {x["name"]: bytes.fromhex(x["hex"]) for x in V["invalid"]}
    cases = {
        "bad-magic": 'magic 0x4758 is not 0x474D ("GM"): this is not a GMA stream',
        "bad-version": "version 2 is not supported (this side speaks version 1)",
        "reserved-command": "command 0x09 is reserved",
        "bad-utf8-from": "from is not valid UTF-8: byte 0xFF at offset 0 of 1",
    }
    for name, sentence in cases.items():
        with pytest.raises(ProtocolError) as e:
            _wire.decode(bad[name])
        assert e.value.sentence == sentence


def _stream():
    s = V["stream"]
    return bytes.fromhex(s["hex"]), s["count"]


def test_stream_one_byte_at_a_time():
    data, count = _stream()
    d = _wire.StreamDecoder()
    out = []
    for b in data:
        out += d.feed(bytes([b]))
    d.finish()
    assert [m.encode() for m in out] == [bytes.fromhex(v["hex"]) for v in V["valid"][:count]]


def test_stream_in_random_pieces():
    data, count = _stream()
    rnd = random.Random(7)
    for _ in range(200):
        d = _wire.StreamDecoder()
        out, i = [], 0
        while i < len(data):
            n = rnd.randint(1, 40)
            out += d.feed(data[i:i + n])
            i += n
        assert len(out) == count
        assert b"".join(m.encode() for m in out) == data


def test_stream_ending_inside_a_message_is_malformed():
    data, _ = _stream()
    d = _wire.StreamDecoder()
    d.feed(data[:-1])
    with pytest.raises(ProtocolError) as e:
        d.finish()
    assert e.value.code == ErrorCode.MALFORMED
    assert e.value.sentence.startswith("stream ended inside a message")


def test_handshake_limit():
    hello = _wire.pack(0, _wire.Command.HELLO, "", "", b"x" * 5000)
    d = _wire.StreamDecoder(handshake_max_data=4096)
    with pytest.raises(ProtocolError) as e:
        d.feed(hello)
    assert e.value.code == ErrorCode.TOO_LARGE
    assert e.value.sentence == "dataLength 5000 exceeds 4096, the limit until the handshake is over"


def test_per_command_rules():
    with pytest.raises(ValueError):
        _wire.pack(1, _wire.Command.DATA, "a@x", "", b"")
    with pytest.raises(ValueError):
        _wire.pack(0, _wire.Command.ACK, "a@x", "b@x", b"1234")
    with pytest.raises(ValueError):
        _wire.pack(1, _wire.Command.DATA, "a\ud800@x", "b@x", b"")
    raw = bytearray(_wire.pack(0, _wire.Command.ACK, "a@x", "b@x", bytes(8)))
    raw[19] = 4
    with pytest.raises(ProtocolError) as e:
        _wire.decode(bytes(raw[:-4]))
    assert e.value.sentence == "ACK dataLength 4 is not 8"
