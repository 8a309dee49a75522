"""The SQL a Python producer evaluates for its consumers' queries (gma._sql): long chains of AND and OR, as
Java's guard takes them, and SQL's three-valued logic."""

from gma import _rows, _sql

SCHEMA = _rows.Schema("t", [("c", "INTEGER"), ("d", "INTEGER")], ["c"])


def test_a_chain_of_over_a_thousand_ors_compiles_and_evaluates_without_recursion():
    # a left-deep tree took a Python frame or two a level: RecursionError ended the producer's link
    sql = "SELECT * FROM t WHERE " + " OR ".join(["c=1"] * 1150)
    assert len(sql) <= _sql.MAX_SQL
    f = _sql.parse(sql).bind(SCHEMA)
    assert f([1, 0]) is True
    assert f([2, 0]) is False


def test_and_and_or_keep_sqls_three_values_under_not():
    # NULL OR FALSE is unknown, so NOT of it is unknown too (not a match); NULL AND FALSE is false, NOT of it true
    assert _sql.parse("SELECT * FROM t WHERE NOT (c = 1 OR d = 2)").bind(SCHEMA)([None, 3]) is False
    assert _sql.parse("SELECT * FROM t WHERE NOT (c = 1 AND d = 2)").bind(SCHEMA)([None, 3]) is True
    assert _sql.parse("SELECT * FROM t WHERE c = 1 OR d = 2 OR c = 5").bind(SCHEMA)([None, 2]) is True
    assert _sql.parse("SELECT * FROM t WHERE c = 1 AND d = 2 AND d > 0").bind(SCHEMA)([1, 2]) is True
