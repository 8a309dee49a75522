"""Monitoring tables' rows against tables/src/test/resources/vectors/rows.json: each valid row encodes to its
hex and decodes back, each invalid one is refused MALFORMED."""

import json
import math
import os

import pytest

from gma import _rows
from gma._errors import ProtocolError

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "tables", "src", "test", "resources", "vectors", "rows.json"),
          encoding="utf-8") as f:
    V = json.load(f)
SCHEMAS = {n: _rows.Schema(n, [(c["name"], c["type"]) for c in s["columns"]], s["primaryKey"])
           for n, s in V["schemas"].items()}


def _value(t, v):
    if v is None:
        return None
    if t in ("INTEGER", "TIMESTAMP"):
        return int(v)
    if t == "DOUBLE":
        return float(v)
    return v


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("v", V["valid"], ids=lambda v: v["name"])
def test_valid_rows_encode_and_decode(v):
    s = SCHEMAS[v["schema"]]
    row = [_value(t, x) for (_, t), x in zip(s.columns, v["row"])]
    assert _rows.encode_row(s, row).hex() == v["hex"]
    got = _rows.decode_row(s, bytes.fromhex(v["hex"]))
    assert all(_same(a, b) for a, b in zip(got, row)), (got, row)


@pytest.mark.parametrize("v", V["invalid"], ids=lambda v: v["name"])
def test_invalid_rows_are_malformed(v):
    with pytest.raises(ProtocolError) as e:
        _rows.decode_row(SCHEMAS[v["schema"]], bytes.fromhex(v["hex"]))
    assert e.value.code == v["code"]
    assert v["reason"] in e.value.sentence, e.value.sentence


def test_envelope_of_the_docs_example():
    qid, at, row = _rows.decode_envelope(bytes.fromhex(
        "07" "0006176339d93000" "000763617264696666066e6f64652d31063fe80000000000000180c0c99de7d88b06"))
    assert (qid, at) == (7, 1714564800000000)
    assert _rows.decode_row(SCHEMAS["host_cpu"], row)[:2] == ["cardiff", "node-1"]


ROW_HEX = "000763617264696666066e6f64652d31063fe80000000000000180c0c99de7d88b06"


def test_batch_of_the_docs_example():
    qid, rows = _rows.decode_batch(lambda q: SCHEMAS["host_cpu"] if q == 7 else None, bytes.fromhex(
        "07" "0006176339d93000" "22" + ROW_HEX + "0006176339e87240" "22" + ROW_HEX))
    rows = list(rows)
    assert qid == 7
    assert [at for at, _ in rows] == [1714564800000000, 1714564801000000]
    assert [values[:2] for _, values in rows] == [["cardiff", "node-1"], ["cardiff", "node-1"]]
    # a query this consumer does not know: its id, and the rows left undecoded
    assert _rows.decode_batch(lambda q: None, bytes.fromhex("07" "0006176339d93000" "22" + ROW_HEX)) == (7, None)


@pytest.mark.parametrize("hex_, reason", [
    ("", "the query id"),
    ("07", "no row after its query id"),
    ("07000102", "ends inside its insert time"),
    ("07" "0006176339d93000" "a200" + ROW_HEX, "not minimal"),
    ("07" "0006176339d93000" "23" + ROW_HEX, "of 35 bytes, but only 34 remain"),
])
def test_broken_batches_are_malformed(hex_, reason):
    with pytest.raises(ProtocolError) as e:
        list(_rows.decode_batch(lambda q: SCHEMAS["host_cpu"], bytes.fromhex(hex_))[1])
    assert e.value.code == "MALFORMED"
    assert reason in e.value.sentence, e.value.sentence


def test_a_batch_gives_the_rows_before_its_fault():
    _, rows = _rows.decode_batch(lambda q: SCHEMAS["host_cpu"], bytes.fromhex(
        "07" "0006176339d93000" "22" + ROW_HEX + "0006176339e87240" "21" + ROW_HEX[:-2]))
    at, values = next(rows)
    assert at == 1714564800000000 and values[:2] == ["cardiff", "node-1"]
    with pytest.raises(ProtocolError):
        next(rows)
