"""Queries over one monitoring table, as docs/tables.md ("Queries") defines them, for a producer that
evaluates them::

    SELECT * | column [, column ...] FROM table [WHERE condition] [;]

    condition := condition AND condition | condition OR condition | NOT condition | ( condition )
               | column op literal | literal op column          op: = <> != < <= > >=
               | column [NOT] IN (literal, ...) | column [NOT] LIKE 'pattern' [ESCAPE 'c']
               | column IS [NOT] NULL
    literal   := integer | decimal | 'string' | TRUE | FALSE | TIMESTAMP 'yyyy-mm-dd[ hh:mm:ss[.ffffff]][Z|+hh:mm]'

A recursive-descent parser that takes these forms and refuses everything else (deny by default), binding
checks each column and literal against the schema, and a filter evaluates the WHERE on a row with SQL's
three-valued logic (None is UNKNOWN). Numbers compare exactly (decimal literals are Decimals, which Python
compares exactly with ints and floats); DOUBLE orders as PostgreSQL's, -0.0 = 0.0 and NaN above everything.
"""

import math
import re
from datetime import datetime, timezone
from decimal import Decimal

from ._errors import ErrorCode, GmaError

MAX_SQL = 8192
MAX_DEPTH = 64
MAX_IN = 1000
_RESERVED_AFTER_WHERE = ("GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING", "UNION", "INTERSECT", "EXCEPT", "JOIN")

_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")*")
  | (?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><>|!=|<=|>=|=|<|>|\(|\)|,|\*|\.|;|-)
  | (?P<bad>\S)
)""", re.X)


def _refuse(sentence):
    return GmaError(ErrorCode.MALFORMED, sentence)


class _Tokens:
    def __init__(self, sql):
        if len(sql) > MAX_SQL:
            raise _refuse("the query is %d characters, over %d" % (len(sql), MAX_SQL))
        if "--" in sql or "/*" in sql:
            raise _refuse("comments are not allowed in a query")
        self.items = []
        pos = 0
        while pos < len(sql):
            m = _TOKEN.match(sql, pos)
            if m is None or m.end() == pos:
                break
            pos = m.end()
            kind = m.lastgroup
            text = m.group(kind)
            if kind == "bad":
                raise _refuse("unexpected %r in the query" % text)
            if kind == "id":
                self.items.append(("id", text.lower(), text.upper()))
            elif kind == "qid":
                self.items.append(("qid", text[1:-1].replace('""', '"'), None))
            elif kind == "str":
                self.items.append(("str", text[1:-1].replace("''", "'"), None))
            else:
                self.items.append((kind, text, text))
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.items[j] if j < len(self.items) else ("end", "", "")

    def next(self):
        t = self.peek()
        self.i += 1
        return t

    def word(self, w):
        t = self.peek()
        if t[0] == "id" and t[2] == w:
            self.i += 1
            return True
        return False

    def op(self, o):
        t = self.peek()
        if t[0] == "op" and t[1] == o:
            self.i += 1
            return True
        return False

    def expect_word(self, w):
        if not self.word(w):
            raise _refuse("expected %s, found %s" % (w, self.describe()))

    def describe(self):
        t = self.peek()
        return "the end of the query" if t[0] == "end" else repr(t[1])


class Query:
    """A parsed query: ``table``, ``columns`` (None for *), ``where`` (a tree, or None); a history query's
    ``descending`` (ORDER BY insert_time DESC) and ``limit`` (None: none)."""

    def __init__(self, table, columns, where, descending=False, limit=None):
        self.table = table
        self.columns = columns
        self.where = where
        self.descending = descending
        self.limit = limit

    def bind(self, schema):
        """A filter ``f(values) -> bool`` of this query over ``schema`` (a _rows.Schema); MALFORMED naming a
        column the table does not have or a literal that does not suit its column."""
        if self.table != schema.name:
            raise _refuse("the query is over %s, not %s" % (self.table, schema.name))
        for c in self.columns or ():
            _index(schema, c)
        if self.where is None:
            return lambda values: True
        test = _compile(self.where, schema)
        return lambda values: test(values) is True


def parse(sql, history=False):
    """A table query; with ``history``, a history query, which may end in ``ORDER BY insert_time [ASC|DESC]``
    and ``LIMIT n`` (docs/tables.md, "History")."""
    t = _Tokens(sql)
    t.expect_word("SELECT")
    if t.word("DISTINCT"):
        raise _refuse("DISTINCT is not allowed")
    columns = []
    if t.op("*"):
        columns = None
    else:
        while True:
            columns.append(_column(t))
            if not t.op(","):
                break
    t.expect_word("FROM")
    table = _name(t, "a table")
    if t.peek()[0] == "op" and t.peek()[1] == ",":
        raise _refuse("one table only: joins and several tables are not allowed")
    if t.peek()[0] == "id" and t.peek()[2] == "JOIN":
        raise _refuse("one table only: joins and several tables are not allowed")
    columns = None if columns is None else [_unqualify(c, table) for c in columns]
    where = None
    if t.word("WHERE"):
        where = _or(t, table, 0)
    descending, limit = False, None
    if history and t.word("ORDER"):
        t.expect_word("BY")
        by = _name(t, "insert_time")
        if by != "insert_time" or t.peek()[0] == "op" and t.peek()[1] == ",":
            raise _refuse("the query orders by %s; a history query orders by insert_time (the insert time), ASC or"
                          " DESC" % by)
        if t.word("DESC"):
            descending = True
        else:
            t.word("ASC")
    if history and t.word("LIMIT"):
        k, n, _ = t.next()
        if k != "num" or not n.isdigit() or not 1 <= int(n) <= 2 ** 31 - 1:
            raise _refuse("LIMIT %s is outside 1..2147483647" % n)
        limit = int(n)
    t.op(";")
    if t.peek()[0] != "end":
        raise _refuse("unexpected %s after the query" % t.describe())
    return Query(table, columns, where, descending, limit)


def _name(t, what):
    k, text, _ = t.next()
    if k not in ("id", "qid"):
        raise _refuse("expected %s, found %r" % (what, text))
    return text


def _column(t):
    name = _name(t, "a column")
    if t.op("."):
        return (name, _name(t, "a column"))
    return name


def _unqualify(c, table):
    if isinstance(c, tuple):
        if c[0] != table:
            raise _refuse("column %s.%s is not of table %s" % (c[0], c[1], table))
        return c[1]
    return c


def _or(t, table, depth):
    if depth > MAX_DEPTH:
        raise _refuse("the query nests more than %d levels" % MAX_DEPTH)
    terms = [_and(t, table, depth + 1)]
    while t.word("OR"):
        terms.append(_and(t, table, depth + 1))
    # one level for a chain, however long, as Java's guard flattens it: no recursion grows with its length
    return terms[0] if len(terms) == 1 else ("or", terms)


def _and(t, table, depth):
    terms = [_not(t, table, depth + 1)]
    while t.word("AND"):
        terms.append(_not(t, table, depth + 1))
    return terms[0] if len(terms) == 1 else ("and", terms)


def _not(t, table, depth):
    if depth > MAX_DEPTH:
        raise _refuse("the query nests more than %d levels" % MAX_DEPTH)
    if t.word("NOT"):
        return ("not", _not(t, table, depth + 1))
    if t.op("("):
        inner = _or(t, table, depth + 1)
        if not t.op(")"):
            raise _refuse("expected ), found %s" % t.describe())
        return inner
    return _test(t, table)


_OPS = {"=", "<>", "!=", "<", "<=", ">", ">="}
_FLIP = {"=": "=", "<>": "<>", "!=": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _is_literal_start(tok):
    k, text, up = tok
    return k in ("str", "num") or (k == "op" and text == "-") or (k == "id" and up in ("TRUE", "FALSE",
                                                                                       "TIMESTAMP", "NULL"))


def _test(t, table):
    if _is_literal_start(t.peek()):
        lit = _literal(t)
        k, op, _ = t.next()
        if k != "op" or op not in _OPS:
            raise _refuse("expected a comparison after a literal, found %r" % op)
        col = _unqualify(_column(t), table)
        return ("cmp", col, _FLIP[op], lit)
    col = _unqualify(_column(t), table)
    if t.word("IS"):
        negate = t.word("NOT")
        t.expect_word("NULL")
        return ("notnull" if negate else "null", col)
    negate = t.word("NOT")
    if t.word("IN"):
        if not t.op("("):
            raise _refuse("expected ( after IN")
        items = [_literal(t)]
        while t.op(","):
            items.append(_literal(t))
        if not t.op(")"):
            raise _refuse("expected ) after the IN list, found %s" % t.describe())
        if len(items) > MAX_IN:
            raise _refuse("IN has %d literals, over %d" % (len(items), MAX_IN))
        return ("in", col, items, negate)
    if t.word("LIKE"):
        k, pattern, _ = t.next()
        if k != "str":
            raise _refuse("LIKE needs a 'pattern'")
        escape = None
        if t.word("ESCAPE"):
            k, escape, _ = t.next()
            if k != "str" or len(escape) != 1:
                raise _refuse("ESCAPE needs one character")
        if len(pattern) > 256 or pattern.count("%") + pattern.count("_") > 8:
            raise _refuse("a LIKE pattern is at most 256 characters and 8 wildcards")
        return ("like", col, _like(pattern, escape), negate, pattern)
    if negate:
        raise _refuse("expected IN or LIKE after NOT, found %s" % t.describe())
    k, op, _ = t.next()
    if k != "op" or op not in _OPS:
        raise _refuse("expected a comparison, IN, LIKE or IS after column %s, found %r" % (col, op))
    if not _is_literal_start(t.peek()):
        raise _refuse("a column is compared with a literal, not with %s" % t.describe())
    return ("cmp", col, "<>" if op == "!=" else op, _literal(t))


def _literal(t):
    """(kind, value, text): kind INTEGER, DOUBLE (a Decimal), STRING, BOOLEAN or TIMESTAMP (microseconds)."""
    k, text, up = t.next()
    if k == "op" and text == "-":
        k2, num, _ = t.next()
        if k2 != "num":
            raise _refuse("expected a number after -")
        kind, value, _ = _number(num)
        return (kind, -value, "-" + num)
    if k == "num":
        return _number(text)
    if k == "str":
        return ("STRING", text, "'%s'" % text)
    if k == "id" and up in ("TRUE", "FALSE"):
        return ("BOOLEAN", up == "TRUE", up)
    if k == "id" and up == "NULL":
        raise _refuse("comparisons with NULL are never true: write IS NULL or IS NOT NULL")
    if k == "id" and up == "TIMESTAMP":
        k2, s, _ = t.next()
        if k2 != "str":
            raise _refuse("TIMESTAMP needs a 'yyyy-mm-dd hh:mm:ss' string")
        return ("TIMESTAMP", _micros(s), "TIMESTAMP '%s'" % s)
    raise _refuse("expected a literal, found %r" % text)


def _number(text):
    if re.fullmatch(r"\d+", text):
        v = int(text)
        if v >= 2 ** 63:
            return ("DOUBLE", Decimal(text), text)
        return ("INTEGER", v, text)
    return ("DOUBLE", Decimal(text), text)


def _micros(s):
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?",
                     s.strip())
    if not m:
        raise _refuse("TIMESTAMP '%s' is not yyyy-mm-dd[ hh:mm:ss[.ffffff]][Z|+hh:mm]" % s)
    y, mo, d, h, mi, se, frac, zone = m.groups()
    try:
        dt = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(se or 0), tzinfo=timezone.utc)
    except ValueError as e:
        raise _refuse("TIMESTAMP '%s': %s" % (s, e)) from None
    micros = (dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) // _MICRO + int((frac or "0").ljust(6, "0"))
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        micros -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60) * 1000000
    return micros


from datetime import timedelta as _td  # noqa: E402

_MICRO = _td(microseconds=1)


def _like(pattern, escape):
    """A compiled LIKE: % any run, _ one code point, the escape makes the next %, _ or itself literal."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("%", "_", escape):
                raise _refuse("after ESCAPE '%s' only %%, _ or '%s' may follow" % (escape, escape))
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


def _index(schema, column):
    i = schema.index.get(column)
    if i is None:
        raise _refuse("column %s is not a column of table %s; its columns are [%s]" % (
            column, schema.name, ", ".join(c for c, _ in schema.columns)))
    return i


_DESCRIBE = {"INTEGER": "an integer", "DOUBLE": "a number", "STRING": "a string", "BOOLEAN": "a boolean",
             "TIMESTAMP": "a timestamp"}


def _check(column, ctype, lit, op):
    kind = lit[0]
    ok = (kind in ("INTEGER", "DOUBLE") if ctype in ("INTEGER", "DOUBLE")
          else kind in ("TIMESTAMP", "INTEGER") if ctype == "TIMESTAMP" else kind == ctype)
    if not ok:
        raise _refuse("column %s is %s and cannot be compared with %s (%s) by %s"
                      % (column, ctype, lit[2], _DESCRIBE[kind], op))


def _key(v):
    """A number's place in PostgreSQL's order for DOUBLE: NaN above all, -0.0 = 0.0 (Decimal, exact)."""
    if isinstance(v, float):
        if math.isnan(v):
            return (1, 0)
        if math.isinf(v):
            return (0, Decimal("Infinity") if v > 0 else Decimal("-Infinity"))
        return (0, Decimal(v))
    if isinstance(v, Decimal):
        return (0, v)
    return (0, Decimal(v))


def _compile(node, schema):
    kind = node[0]
    if kind in ("and", "or"):
        terms = [_compile(n, schema) for n in node[1]]
        decisive = kind == "or"  # True decides an OR, False an AND; NULL (None) otherwise, as SQL's three values

        def f(v):
            unknown = False
            for term in terms:
                x = term(v)
                if x is decisive:
                    return decisive
                unknown = unknown or x is None
            return None if unknown else not decisive
        return f
    if kind == "not":
        a = _compile(node[1], schema)
        return lambda v: None if a(v) is None else not a(v)
    col = node[1]
    i = _index(schema, col)
    ctype = schema.columns[i][1]
    if kind == "null":
        return lambda v: v[i] is None
    if kind == "notnull":
        return lambda v: v[i] is not None
    if kind == "like":
        if ctype != "STRING":
            raise _refuse("column %s is %s; LIKE needs a STRING column" % (col, ctype))
        rx, negate = node[2], node[3]
        return lambda v: None if v[i] is None else (rx.fullmatch(v[i]) is None) == negate
    numeric = ctype in ("INTEGER", "DOUBLE", "TIMESTAMP")
    if kind == "in":
        items, negate = node[2], node[3]
        for lit in items:
            _check(col, ctype, lit, "IN")
        keys = [_key(l[1]) if numeric else l[1] for l in items]

        def f(v):
            x = v[i]
            if x is None:
                return None
            x = _key(x) if numeric else x
            return (x in keys) != negate
        return f
    op, lit = node[2], node[3]
    _check(col, ctype, lit, op)
    if ctype == "BOOLEAN" and op not in ("=", "<>"):
        raise _refuse("column %s is BOOLEAN, which has no order; compare it with = or <>" % col)
    target = _key(lit[1]) if numeric else lit[1]
    cmp = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
    if numeric:
        return lambda v: None if v[i] is None else cmp(_key(v[i]), target)
    return lambda v: None if v[i] is None else cmp(v[i], target)


def parse_predicate(text, schema):
    """A producer's predicate (``column = literal`` or ``IN``, joined by AND, over non-DOUBLE columns): its
    filter; MALFORMED for anything else."""
    q = parse("SELECT * FROM %s WHERE %s" % (schema.name, text))

    def only_equalities(n):
        if n[0] == "and":
            for term in n[1]:
                only_equalities(term)
        elif n[0] == "cmp" and n[2] == "=" or n[0] == "in" and not n[3]:
            if schema.columns[_index(schema, n[1])][1] == "DOUBLE":
                raise _refuse("a predicate cannot fix DOUBLE column %s" % n[1])
        else:
            raise _refuse("a predicate is column = literal or column IN (...), joined by AND")
    only_equalities(q.where)
    return q.bind(schema)
