"""A consumer's monitoring-table queries (docs/tables.md, "Queries"), as Java's TableMediator: continuous
queries (TABLE_QUERY, then TABLE_ROW or TABLE_ROWS as producers insert) and latest queries (TABLE_LATEST), over the producers
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
import time

from . import _rows
from ._errors import ErrorCode, GmaError, ProtocolError
from ._wire import Command

LOG = logging.getLogger("gma")
REFRESH_SECONDS = 5.0
# a subscribed producer silent this long for a query is asked for it again (docs/tables.md)
REASSERT_SECONDS = 10.0


def _instant(micros):
    """Microseconds since the epoch as Java's Instant.toString prints it."""
    from datetime import datetime, timedelta, timezone
    t = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=micros)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += (".%06d" % t.microsecond).rstrip("0") if t.microsecond % 1000 else ".%03d" % (t.microsecond // 1000)
    return text + "Z"


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
        # each subscribed producer's last sign for this query (its answer, or rows), time.monotonic(): one silent
        # for REASSERT_SECONDS is asked again (it may have lost the query: restarted under its name, say)
        self.heard = {}
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
        clock = time.monotonic()
        for producer in sorted(now - q.producers):
            try:
                self._core.request(producer, data, self._core.request_timeout, command=Command.TABLE_QUERY)
                q.producers.add(producer)
                q.heard[producer] = time.monotonic()
            except GmaError as e:
                if strict and e.code in (ErrorCode.MALFORMED, ErrorCode.FORBIDDEN):
                    raise
                LOG.info("%s: %s did not take query %d: %s", self._core.name, producer, q.query_id, e)
        for producer in sorted(q.producers & now):
            if clock - q.heard.get(producer, clock) > REASSERT_SECONDS:
                q.heard[producer] = clock  # asked again once a REASSERT_SECONDS, whatever the answer
                try:  # the same query: a producer that has it keeps it, one that lost it takes it again
                    self._core.request(producer, data, self._core.request_timeout, command=Command.TABLE_QUERY)
                except GmaError as e:
                    LOG.info("%s: could not ask %s for query %d again: %s", self._core.name, producer,
                             q.query_id, e)
        q.producers &= now  # those that left: forgotten
        for gone in set(q.heard) - q.producers:
            del q.heard[gone]

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
        """A TABLE_ROW or TABLE_ROWS, on the link's thread: each row to its query's handler, projected; an
        unknown query is cancelled at its producer. A malformed one is dropped and logged, as Java's consumer
        does (the rows of a batch before the fault were given)."""
        try:
            self._receive(m)
        except ProtocolError as e:
            LOG.warning("%s: dropped a malformed %s from %s: %s", self._core.name, Command.name(m.command),
                        m.sender, e.sentence)

    def _receive(self, m):
        if m.command == Command.TABLE_ROWS:
            def schema(qid):
                q = self._queries.get(qid)
                return None if q is None or q.closed else q.schema
            qid, rows = _rows.decode_batch(schema, m.data)
        else:
            qid, at, row = _rows.decode_envelope(m.data)
            rows = None
        q = self._queries.get(qid)
        if q is None or q.closed:
            try:
                self._core.send(m.sender, Command.TABLE_CANCEL, _rows.varint(qid))
            except GmaError:
                pass
            return
        clock = time.monotonic()
        if clock - q.heard.get(m.sender, clock) > 1.0:
            q.heard[m.sender] = clock
        if rows is None:
            rows = [(at, _rows.decode_row(q.schema, row))]
        for at, values in rows:
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


class _Published:
    """A table this producer publishes: its schema, predicate, retention, latest rows, and the continuous
    queries of its consumers."""

    def __init__(self, schema, predicate, predicate_filter, latest_seconds, history_seconds):
        self.schema = schema
        self.predicate = predicate
        self.predicate_filter = predicate_filter
        self.latest_seconds = latest_seconds
        self.history_seconds = history_seconds
        self.latest = {}  # key tuple -> (insert micros, values)
        self.queries = {}  # (consumer, query id) -> filter
        self.lock = threading.Lock()

    def purge(self, now_micros):
        oldest = now_micros - self.latest_seconds * 1000000
        for k in [k for k, (at, _) in self.latest.items() if at < oldest]:
            del self.latest[k]


class Publisher:
    """A producer's monitoring tables (docs/tables.md): declared at the registry, rows inserted, and the
    queries of consumers (TABLE_QUERY, TABLE_CANCEL, TABLE_LATEST) answered, as Java's TablePublisher."""

    def __init__(self, core):
        self._core = core
        self._tables = {}

    def declare(self, name, columns, primary_key, predicate=None, latest_retention=600, history_retention=0):
        from . import _sql
        if history_retention:
            # consumers would ask this producer for history it does not keep
            raise ValueError("table %s: history_retention %s: this client keeps no history yet (0 only); an"
                             " archiver (gma archive) keeps it" % (name, history_retention))
        schema = _rows.Schema(name, columns, primary_key)
        for _, t in schema.columns:
            if t not in _rows.TYPES:
                raise ValueError("table %s: type %s is not one of %s" % (name, t, ", ".join(_rows.TYPES)))
        f = _sql.parse_predicate(predicate, schema) if predicate else None
        registry = self._core._registry
        try:
            registry.declare_table(name, schema.columns, schema.primary_key)
            registry.publish_table(self._core.name, name, predicate, int(latest_retention), int(history_retention))
        except GmaError as e:
            raise GmaError(ErrorCode.FORBIDDEN if getattr(e, "status", 0) == 409 else e.code,
                           "declare table %s: %s" % (name, e.sentence)) from None
        self._tables[name] = _Published(schema, predicate, f, latest_retention, history_retention)

    def republish(self):
        """After registering again: the registry forgot this producer's publications."""
        for name, t in list(self._tables.items()):
            try:
                self._core._registry.publish_table(self._core.name, name, t.predicate, int(t.latest_seconds),
                                                   int(t.history_seconds))
            except GmaError as e:
                LOG.warning("%s: publishing table %s again failed: %s", self._core.name, name, e.sentence)

    def insert(self, table, values):
        """Keeps the row as the latest of its key and sends it to each query it matches: how many."""
        t = self._tables.get(table)
        if t is None:
            raise ValueError("table %s is not declared by %s" % (table, self._core.name))
        if isinstance(values, dict):
            unknown = set(values) - set(t.schema.index)
            if unknown:
                raise ValueError("table %s has no column %s" % (table, ", ".join(sorted(unknown))))
            values = [values.get(c) for c, _ in t.schema.columns]
        values = list(values)
        row = _rows.encode_row(t.schema, values)  # checks the types and the key
        if t.predicate_filter is not None and not t.predicate_filter(values):
            raise ValueError("table %s: the row is outside this producer's predicate %s" % (table, t.predicate))
        at = int(time.time() * 1000000)
        key = tuple(values[i] for i in t.schema.key_indexes)
        with t.lock:
            t.latest[key] = (at, values)
            targets = [(c, qid) for (c, qid), f in t.queries.items() if f(values)]
        sent = 0
        for consumer, qid in targets:
            try:
                self._core.send(consumer, Command.TABLE_ROW, _rows.varint(qid) + _rows._I64.pack(at) + row)
                sent += 1
            except GmaError as e:  # a consumer whose queue refuses it misses it; the others still get it
                LOG.info("%s: row of %s not sent to %s: %s", self._core.name, table, consumer, e)
        return sent

    def receive(self, m):
        """TABLE_QUERY, TABLE_CANCEL, TABLE_LATEST or TABLE_HISTORY from a consumer, on the link's thread."""
        from . import _sql
        try:
            if m.command == Command.TABLE_HISTORY:
                self._history(m)
                return
            if m.command == Command.TABLE_CANCEL:
                qid, _ = _rows.read_varint(m.data, 0, "TABLE_CANCEL's query id")
                for t in self._tables.values():
                    with t.lock:
                        t.queries.pop((m.sender, qid), None)
                return
            if m.command == Command.TABLE_QUERY:
                qid, pos = _rows.read_varint(m.data, 0, "TABLE_QUERY's query id")
                sql = self._text(m.data[pos:], "TABLE_QUERY")
                for t in self._tables.values():  # the id names this query now (a restarted consumer numbers afresh)
                    with t.lock:
                        t.queries.pop((m.sender, qid), None)
            else:
                qid, sql = None, self._text(m.data, "TABLE_LATEST")
            q = _sql.parse(sql)
            t = self._tables.get(q.table)
            if t is None:
                raise GmaError(ErrorCode.MALFORMED, "table %s is not published by %s" % (q.table, self._core.name))
            f = q.bind(t.schema)
            if qid is not None:
                with t.lock:
                    t.queries[(m.sender, qid)] = f
                self._core.send_control(m.sender, Command.REPLY, m.sequence, b"")
                return
            self._latest(m, t, f)
        except GmaError as e:
            if m.command != Command.TABLE_CANCEL:
                self._core._error(m.sender, m.sequence, e.code, e.sentence)
        except Exception as e:  # a query this producer cannot evaluate: answered, never the link's end
            if m.command != Command.TABLE_CANCEL:
                self._core._error(m.sender, m.sequence, ErrorCode.MALFORMED, "%s cannot answer %s: %s: %s" % (
                    self._core.name, Command.name(m.command), type(e).__name__, e))

    @staticmethod
    def _text(b, what):
        try:
            return bytes(b).decode("utf-8")
        except UnicodeDecodeError:
            raise GmaError(ErrorCode.MALFORMED, "%s's SQL is not valid UTF-8" % what) from None

    def _latest(self, m, t, f):
        limit = self._core.max_message_bytes - 1024
        with t.lock:
            t.purge(int(time.time() * 1000000))
            rows = [(at, v) for at, v in t.latest.values() if f(v)]
        out = bytearray()
        for at, v in rows:
            row = _rows.encode_row(t.schema, v)
            out += _rows._I64.pack(at) + _rows.varint(len(row)) + row
            if len(out) > limit:
                self._core._error(m.sender, m.sequence, ErrorCode.TOO_LARGE, "the latest rows of %s that match the"
                                  " query (%d rows) exceed the answer limit of %d bytes of %s; narrow the WHERE"
                                  % (t.schema.name, len(rows), limit, self._core.name))
                return
        self._core.send_control(m.sender, Command.REPLY, m.sequence, bytes(out))

    def _history(self, m):
        """TABLE_HISTORY (docs/tables.md): this producer keeps no history, so it answers from its latest rows
        inserted since the time asked (what an archiver catches up with), complete since now for history, since
        the latest retention's start for latest."""
        from . import _sql
        b = m.data
        if len(b) < 9:
            raise GmaError(ErrorCode.MALFORMED, "TABLE_HISTORY's data is %d bytes, shorter than 9" % len(b))
        flags = b[0]
        if flags & ~1:
            raise GmaError(ErrorCode.MALFORMED, "TABLE_HISTORY's flags are 0x%02X; only 0x01 (latest) is defined"
                           % flags)
        latest = bool(flags & 1)
        since = _rows._I64.unpack_from(b, 1)[0]
        max_rows, pos = _rows.read_varint(b, 9, "TABLE_HISTORY's maxRows")
        if max_rows == 0:
            raise GmaError(ErrorCode.MALFORMED, "TABLE_HISTORY's maxRows is 0")
        q = _sql.parse(self._text(b[pos:], "TABLE_HISTORY"), history=True)
        t = self._tables.get(q.table)
        if t is None:
            raise GmaError(ErrorCode.MALFORMED, "table %s is not published by %s" % (q.table, self._core.name))
        f = q.bind(t.schema)
        now = int(time.time() * 1000000)
        with t.lock:
            t.purge(now)
            rows = [(at, v) for at, v in t.latest.values() if at >= since and f(v)]
        complete = now - t.latest_seconds * 1000000 if latest else now
        if not latest:
            rows.sort(key=lambda r: r[0], reverse=q.descending)
            if q.limit is not None:
                rows = rows[:q.limit]
        what = "%s of %s since %s that match the query" % ("the latest rows" if latest else "the history",
                                                          t.schema.name, _instant(since))
        if len(rows) > max_rows:
            raise GmaError(ErrorCode.TOO_LARGE, "%s are more than %d rows, the most the consumer takes in one"
                           " answer; narrow the WHERE, shorten the period or add a LIMIT" % (what, max_rows))
        name = self._core.name.encode("utf-8")
        out = bytearray(_rows._I64.pack(complete))
        out += _rows.varint(1) + _rows.varint(len(name)) + name  # one producer: this one
        limit = self._core.max_message_bytes - 1024
        for at, v in rows:
            row = _rows.encode_row(t.schema, v)
            out += b"\x00" + _rows._I64.pack(at) + _rows.varint(len(row)) + row
            if len(out) > limit:
                raise GmaError(ErrorCode.TOO_LARGE, "%s (%d rows) exceed the answer limit of %d bytes of %s;"
                               " narrow the WHERE, shorten the period or add a LIMIT"
                               % (what, len(rows), limit, self._core.name))
        self._core.send_control(m.sender, Command.REPLY, m.sequence, bytes(out))

    def drop_consumer(self, consumer):
        """A consumer said BYE or is gone: its queries end."""
        for t in self._tables.values():
            with t.lock:
                for k in [k for k in t.queries if k[0] == consumer]:
                    del t.queries[k]
