"""A consumer's monitoring-table queries (docs/tables.md, "Queries"), as Java's TableMediator: continuous
queries (TABLE_QUERY, then TABLE_ROW as producers insert) and latest queries (TABLE_LATEST), over the producers
that publish the table (the registry's ``publishers`` view).

The producers evaluate the WHERE (Java's QueryGuard: the SQL is sent as it is, and a producer refuses what it
does not accept with ERROR MALFORMED and its sentence); this side reads the SELECT list and the table to bind
the query to the registry's schema (a column the table does not have is refused here, before anything is
sent), decodes rows and projects them to the selected columns.
"""

import collections
import itertools
import logging
import re
import threading

from . import _rows
from ._errors import ErrorCode, GmaError
from ._wire import Command

LOG = logging.getLogger("gma")
REFRESH_SECONDS = 5.0

TableRow = collections.namedtuple("TableRow", "producer inserted_micros row")
TableRow.__doc__ = """A row a query answered: the producer's name, its insert time (microseconds since the
epoch, the producer's clock), and the row projected to the selected columns (a dict, in their order)."""

_TOKEN = re.compile(r'\s*(?:("(?:[^"]|"")*")|([A-Za-z_][A-Za-z0-9_]*)|(\*|,|\.)|(.))', re.S)


def parse_select(sql):
    """(table, [columns] or None for *) of ``SELECT ... FROM table ...``; GmaError MALFORMED otherwise."""
    tokens = []
    pos = 0
    while pos < len(sql):
        m = _TOKEN.match(sql, pos)
        if m is None or m.end() == pos:
            break
        quoted, ident, punct, other = m.groups()
        pos = m.end()
        if quoted:
            tokens.append(("id", quoted[1:-1].replace('""', '"')))
        elif ident:
            tokens.append(("kw" if ident.upper() in ("SELECT", "FROM") else "id", ident.lower()
                           if ident.upper() not in ("SELECT", "FROM") else ident.upper()))
        elif punct:
            tokens.append(("p", punct))
        else:
            tokens.append(("other", other))
            if other is not None and other.strip():
                break
    refuse = GmaError(ErrorCode.MALFORMED, "expected SELECT * | column, ... FROM table, not: %s" % sql[:200])
    if not tokens or tokens[0] != ("kw", "SELECT"):
        raise refuse
    i = 1
    columns = []
    if tokens[i:i + 1] == [("p", "*")]:
        columns = None
        i += 1
    else:
        while True:
            if i >= len(tokens) or tokens[i][0] != "id":
                raise refuse
            name = tokens[i][1]
            i += 1
            if tokens[i:i + 1] == [("p", ".")]:  # table.column
                if i + 1 >= len(tokens) or tokens[i + 1][0] != "id":
                    raise refuse
                name = (name, tokens[i + 1][1])
                i += 2
            columns.append(name)
            if tokens[i:i + 1] == [("p", ",")]:
                i += 1
                continue
            break
    if tokens[i:i + 1] != [("kw", "FROM")] or i + 1 >= len(tokens) or tokens[i + 1][0] != "id":
        raise refuse
    table = tokens[i + 1][1]
    if columns is not None:
        plain = []
        for c in columns:
            if isinstance(c, tuple):
                if c[0] != table:
                    raise GmaError(ErrorCode.MALFORMED, "column %s.%s is not of table %s" % (c[0], c[1], table))
                c = c[1]
            plain.append(c)
        columns = plain
    return table, columns


class ContinuousQuery:
    """A continuous query: rows arrive at its handler until :meth:`close` (also a context manager)."""

    def __init__(self, mediator, query_id, sql, schema, columns, handler):
        self._mediator = mediator
        self.query_id = query_id
        self.sql = sql
        self.schema = schema
        self.columns = columns
        self.handler = handler
        self.producers = set()
        self.closed = False

    def close(self):
        """Ends the query: TABLE_CANCEL to each producer; rows still on their way are dropped."""
        self._mediator._close(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Mediator:
    def __init__(self, core):
        self._core = core
        self._ids = itertools.count(1)
        self._queries = {}
        self._lock = threading.Lock()
        self._refresher = None
        self._stop = threading.Event()

    # ------------------------------------------------------------------ binding

    def _bind(self, sql):
        table, columns = parse_select(sql)
        try:
            schema = _rows.Schema.from_json(self._core._registry.table(table))
        except GmaError as e:
            if getattr(e, "status", None) == 404:
                raise GmaError(ErrorCode.NO_ROUTE, "no table is declared by the name %s" % table) from None
            raise
        if columns is None:
            columns = [c for c, _ in schema.columns]
        for c in columns:
            if c not in schema.index:
                raise GmaError(ErrorCode.MALFORMED, "column %s is not a column of table %s (%s)" % (
                    c, table, ", ".join(n for n, _ in schema.columns)))
        return schema, columns

    def _publishers(self, table):
        rows = self._core.query("SELECT name FROM publishers WHERE table_name = '%s'" % table.replace("'", "''"))
        return [r[0] for r in rows.rows if r[0] != self._core.name]

    @staticmethod
    def _project(schema, columns, values):
        return {c: values[schema.index[c]] for c in columns}

    # ------------------------------------------------------------------ continuous

    def continuous(self, sql, handler):
        schema, columns = self._bind(sql)
        q = ContinuousQuery(self, next(self._ids), sql, schema, columns, handler)
        with self._lock:
            self._queries[q.query_id] = q
        try:
            self._subscribe_all(q, strict=True)
        except BaseException:
            self._close(q)
            raise
        self._start_refresher()
        return q

    def _subscribe_all(self, q, strict):
        data = _rows.varint(q.query_id) + q.sql.encode("utf-8")
        now = set(self._publishers(q.schema.name))
        for producer in sorted(now - q.producers):
            try:
                self._core.request(producer, data, self._core.request_timeout, command=Command.TABLE_QUERY)
                q.producers.add(producer)
            except GmaError as e:
                if strict and e.code in (ErrorCode.MALFORMED, ErrorCode.FORBIDDEN):
                    raise
                LOG.info("%s: %s did not take query %d: %s", self._core.name, producer, q.query_id, e)
        q.producers &= now  # those that left: forgotten

    def _start_refresher(self):
        with self._lock:
            if self._refresher is None:
                self._refresher = threading.Thread(target=self._refresh_loop, name="gma-tables-refresh",
                                                   daemon=True)
                self._refresher.start()

    def _refresh_loop(self):
        while not self._stop.wait(REFRESH_SECONDS):
            with self._lock:
                queries = list(self._queries.values())
            for q in queries:
                if q.closed:
                    continue
                try:
                    self._subscribe_all(q, strict=False)
                except GmaError as e:
                    LOG.info("%s: refreshing query %d failed: %s", self._core.name, q.query_id, e)

    def receive(self, m):
        """A TABLE_ROW, on the link's thread: to its query's handler, projected; an unknown query is
        cancelled at its producer."""
        qid, at, row = _rows.decode_envelope(m.data)
        q = self._queries.get(qid)
        if q is None or q.closed:
            try:
                self._core.send(m.sender, Command.TABLE_CANCEL, _rows.varint(qid))
            except GmaError:
                pass
            return
        values = _rows.decode_row(q.schema, row)
        try:
            q.handler(TableRow(m.sender, at, self._project(q.schema, q.columns, values)))
        except Exception as e:  # the handler's failure is this row's
            LOG.warning("%s: row handler of query %d failed: %r", self._core.name, qid, e)

    def _close(self, q):
        if q.closed:
            return
        q.closed = True
        with self._lock:
            self._queries.pop(q.query_id, None)
        for producer in list(q.producers):
            try:
                self._core.send(producer, Command.TABLE_CANCEL, _rows.varint(q.query_id))
            except GmaError:
                pass

    def dropped(self, producer):
        """A producer is gone (NO_ROUTE): the queries forget it."""
        with self._lock:
            for q in self._queries.values():
                q.producers.discard(producer)

    # ------------------------------------------------------------------ latest

    def latest(self, sql):
        schema, columns = self._bind(sql)
        newest = {}
        for producer in self._publishers(schema.name):
            try:
                answer = self._core.request(producer, sql.encode("utf-8"), self._core.request_timeout,
                                            command=Command.TABLE_LATEST)
            except GmaError as e:
                if e.code in (ErrorCode.MALFORMED, ErrorCode.TOO_LARGE, ErrorCode.FORBIDDEN):
                    raise
                LOG.info("%s: %s skipped in a latest query: %s", self._core.name, producer, e)
                continue
            for at, values in _rows.decode_latest(schema, answer):
                key = tuple(values[i] for i in schema.key_indexes)
                held = newest.get(key)
                if held is None or at > held[1]:
                    newest[key] = (producer, at, values)
        return [TableRow(p, at, self._project(schema, columns, v)) for p, at, v in newest.values()]

    def close(self):
        self._stop.set()
        with self._lock:
            queries = list(self._queries.values())
        for q in queries:
            self._close(q)
