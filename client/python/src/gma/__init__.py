"""GMA for Python: producers and consumers of monitoring events that speak the GMA/1 protocol, byte for byte
as the Java client does (docs/protocol.md), with the standard library alone.

::

    import gma

    with gma.Producer(registry="http://127.0.0.1:8080", domain="lan", label="cpu") as cpu:
        cpu.publish(b"load=0.73")                       # to every current subscriber

    def show(m):
        print(m.sender, m.text())

    with gma.Consumer(registry="http://127.0.0.1:8080", domain="lan", label="collector",
                      on_message=show) as c:
        for row in c.query("SELECT name FROM producers WHERE domain = 'lan'"):
            c.subscribe(row["name"])

Failures raise :class:`GmaError`, whose ``code`` is the protocol's error code (NO_ROUTE, QUEUE_FULL, ...).
"""

from ._endpoint import DEFAULT_MAX_LINKS, EndpointCore, Incoming
from ._errors import ErrorCode, GmaError, ProtocolError
from ._queue import BLOCK, DROP_OLDEST, FAIL, Sent
from ._registry import QueryResult
from ._tables import ContinuousQuery, TableRow
from ._wire import Command, Message

__all__ = ["Producer", "Consumer", "GmaError", "ProtocolError", "ErrorCode", "Command", "Message", "Incoming",
           "Sent", "QueryResult", "ContinuousQuery", "TableRow", "BLOCK", "FAIL", "DROP_OLDEST", "Security"]
__version__ = "0.1.0"


class _Endpoint:
    """What every endpoint can do, producer or consumer; see :class:`Producer` for the keyword arguments."""

    _kind = None

    def __init__(self, *, registry, domain, label, pc=None, security=None, on_message=None, exact=False,
                 host="127.0.0.1", policy=BLOCK, block_timeout=10.0, request_timeout=30.0, ping_interval=15.0,
                 lease=30.0, max_queued_bytes=8 << 20, max_queued_messages=65536, max_message_bytes=16 << 20,
                 attributes=None, max_links=DEFAULT_MAX_LINKS):
        self._core = EndpointCore(self._kind, registry, domain, label, pc=pc, security=security,
                                  on_message=on_message, exact=exact, host=host, policy=policy,
                                  block_timeout=block_timeout, request_timeout=request_timeout,
                                  ping_interval=ping_interval, lease=lease, max_queued_bytes=max_queued_bytes,
                                  max_queued_messages=max_queued_messages, max_message_bytes=max_message_bytes,
                                  attributes=attributes, max_links=max_links)

    @property
    def name(self):
        """The registered name, ``<label>-<nonce>@<domain>`` (``<label>@<domain>`` when exact)."""
        return self._core.name

    def send(self, to, data, command=Command.DATA):
        """Sends DATA (or an application command, 0x46..0xFF: 0x40..0x45 are monitoring tables') without
        waiting for the peer.

        Returns a :class:`Sent`, whose ``acknowledged(timeout)`` waits for the first hop's ACK (and raises
        GmaError with the code of the PC servlet's refusal, NO_ROUTE, FORBIDDEN or QUEUE_FULL, for a message
        refused before that ACK). Raises
        GmaError QUEUE_FULL (the peer's queue is full: FAIL at once, BLOCK after ``block_timeout``; nothing was
        queued), NO_ROUTE (another domain without ``pc``), SHUTTING_DOWN."""
        if not (command == Command.DATA or 0x46 <= command <= 0xFF):
            raise ValueError("command 0x%02X is not DATA nor an application command 0x46..0xFF (0x40..0x45 are"
                             " monitoring tables')" % command)
        return self._core.send(to, command, data)

    def request(self, to, data, timeout=None):
        """Sends a REQUEST and waits for its REPLY: the reply's bytes.

        Raises GmaError with the code of the ERROR the peer answered, TIMEOUT after ``timeout`` seconds
        (default ``request_timeout``, 30 s), QUEUE_FULL, NO_ROUTE, SHUTTING_DOWN. Not from a message handler
        (RuntimeError): the reply would come on the thread that waits."""
        return self._core.request(to, bytes(data), timeout)

    def query(self, sql):
        """Runs one SELECT over the registry's views: a :class:`QueryResult` (columns, rows; iterable as
        dicts)."""
        return self._core.query(sql)

    def stats(self):
        """A snapshot of this endpoint's counters, as a dict."""
        return self._core.stats()

    def close(self):
        """Unregisters, says BYE to every peer, fails what is still queued with SHUTTING_DOWN."""
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.name)


class Producer(_Endpoint):
    """A producer of monitoring events: it publishes to its subscribers, answers requests, and sends and
    requests like any endpoint.

    Keyword arguments (all but the first three optional):

    - ``registry``: the registry's base URL, ``http://host:8080`` (several separated by commas);
    - ``domain``, ``label``: the name asked for; the registry adds a nonce unless ``exact=True``;
    - ``pc``: the uplink address (``host:port``) of this domain's PC servlet, to reach other domains;
    - ``security``: a :class:`Security` (TLS and tokens, docs/security.md); default none (plaintext);
    - ``on_message``: called with each :class:`Incoming` message, on the link's reader thread;
    - ``policy``: when a peer's send queue is full, ``BLOCK`` (default, up to ``block_timeout`` s, 10),
      ``FAIL`` (QUEUE_FULL at once) or ``DROP_OLDEST``;
    - ``max_queued_bytes`` (8 MiB), ``max_queued_messages`` (65,536): each peer's queue bound;
    - ``request_timeout`` (30 s), ``ping_interval`` (15 s), ``lease`` (30 s), ``host`` (127.0.0.1, where it
      listens), ``attributes`` (a dict registered with it), ``max_message_bytes`` (16 MiB);
    - ``max_links`` (1,000): the most links it accepts open at once; a peer past it is answered QUEUE_FULL and
      tries again after its back-off (at most 64 accepted connections are in their handshake at once, and one
      more is closed at once).
    """

    _kind = "producer"

    def publish(self, data, filter=None):
        """Sends DATA to every current subscriber (whose filter text ``filter(text)`` accepts, if given): a
        list of :class:`Sent`, a failed one for a subscriber whose queue refused it."""
        return self._core.publish(bytes(data), filter)

    def add_subscriber(self, consumer, filter=None):
        """Adds a subscriber from this side."""
        self._core.add_subscriber(consumer, filter)

    def remove_subscriber(self, consumer):
        self._core.remove_subscriber(consumer)

    @property
    def subscribers(self):
        """The current subscribers and their filter texts."""
        return self._core.subscribers()

    def declare(self, table, columns, primary_key, predicate=None, latest_retention=600, history_retention=0):
        """Declares a monitoring table at the registry and publishes it as this producer's (docs/tables.md):
        ``columns`` a list of (name, type), types INTEGER, DOUBLE, STRING, BOOLEAN, TIMESTAMP; ``primary_key``
        column names; ``predicate`` what every row of this producer satisfies (``"site = 'cardiff'"``);
        retention periods in seconds. Raises GmaError FORBIDDEN when the registry holds another declaration of
        the table (its sentence names each difference), MALFORMED for a predicate it does not take."""
        self._core.published.declare(table, columns, primary_key, predicate, latest_retention, history_retention)

    def insert(self, table, row):
        """Inserts a row (a list in column order, or a dict by column; TIMESTAMP in microseconds since the
        epoch): it becomes the latest of its key, and goes to every consumer's continuous query whose WHERE it
        satisfies. Returns how many queries it was sent to; ValueError naming the table, the column and the
        value for a row that does not fit (nothing was kept or sent)."""
        return self._core.published.insert(table, row)


class Consumer(_Endpoint):
    """A consumer of monitoring events: it finds producers with SQL, subscribes to them, sends and requests.
    Keyword arguments as :class:`Producer`'s."""

    _kind = "consumer"

    def subscribe(self, producer, filter=None):
        """Subscribes to a producer (SUBSCRIBE, with an optional filter text the producer interprets): its
        events arrive at ``on_message`` as DATA. A :class:`Sent`."""
        return self._core.send(producer, Command.SUBSCRIBE, (filter or "").encode("utf-8"))

    def unsubscribe(self, producer):
        """Ends a subscription (UNSUBSCRIBE, a control message: it never waits behind data)."""
        self._core.send_control(producer, Command.UNSUBSCRIBE, self._core.next_sequence(), b"")

    def continuous(self, sql, handler):
        """Starts a continuous query over a monitoring table (docs/tables.md, "Queries"): from now on each row
        a producer of the table inserts that the WHERE accepts arrives at ``handler`` as a :class:`TableRow`
        (producer, inserted_micros, row: a dict of the selected columns), on a link's reader thread. It asks
        every producer that publishes the table (waiting for their answers), and every 5 s those that came.

        Returns a :class:`ContinuousQuery` (``close()``, or a context manager). Raises GmaError NO_ROUTE when
        no table is declared by that name, MALFORMED for a query refused here (a column the table does not
        have) or by a producer (its sentence)."""
        return self._core.tables.continuous(sql, handler)

    def latest(self, sql):
        """Runs a latest query: each producer of the table answers its latest row per primary key within its
        latest retention, and the newest of each key among them is kept. A list of :class:`TableRow`, in no
        order; producers that do not answer within ``request_timeout`` are skipped. Raises as
        :meth:`continuous`, and TOO_LARGE when a producer's matching rows exceed its answer limit."""
        return self._core.tables.latest(sql)


def __getattr__(name):
    if name == "Security":
        from ._security import Security
        return Security
    raise AttributeError(name)
