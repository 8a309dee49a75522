"""The one endpoint implementation under Producer and Consumer, as Java's EndpointCore.

Its parts, each a few methods here: registration and its lease (a thread that
renews every third of it and registers the same name again after a lost
lease); the peers, each with its send queue, and the uplink to this domain's
PC servlet for every other domain; their links, made, accepted and retried;
sending; the replies awaited; a producer's subscribers; and receiving:
checking, deduplicating by (from, sequence) and delivering.

Threads: one accepting, one reader per link (handlers run there), a writer per
link when the socket is full, one connecting per attempt, the ticker (ACKs due
by time, PINGs, request timeouts, retries: every 10 ms) and the lease keeper.
"""

import collections
import heapq
import itertools
import logging
import socket
import threading
import time

from . import _handshake, _link, _tables, _wire
from ._errors import ErrorCode, GmaError, parse_error_text
from ._inbox import Incoming, _Dedup  # noqa: F401 (Incoming: the package's export)
from ._peers import _Awaited, _Peer
from ._queue import BLOCK, DROP_OLDEST, FAIL, Sent
from ._queue import failed as _failed_sent
from ._registry import RegistryClient, RegistryError
from ._wire import Command

_HEADER_PACK = _wire._HEADER.pack
_SEQ_LENGTH_PACK = _link._SEQ_LENGTH.pack  # a header's bytes 8..20: sequence, dataLength
_join = b"".join
_READING = _link._READING
_ACK, _HELLO, _REQUEST = Command.ACK, Command.HELLO, Command.REQUEST
_monotonic = time.monotonic
#: A sender that finds this much unwritten writes it itself, rather than wait for the writer thread to get
#: the GIL (which a busy sender holds for up to the interpreter's switch interval, 5 ms).
_WRITE_HERE_BYTES = 64 * 1024

LOG = logging.getLogger("gma")
_NO_DATA = b""
_PCH = "pc@"
#: the most links peers may hold open to an endpoint, by default (each is a reader thread, and a writer while
#: sending)
DEFAULT_MAX_LINKS = 1000
#: the most accepted connections in their handshake at once (a thread each, for at most 5 s)
MAX_HANDSHAKES = 64


class Counters:
    """What an endpoint counted; ``stats()`` answers a dict of them."""

    def __init__(self):
        self.sent = 0
        self.received = 0
        self.duplicates = 0
        self.reconnects = 0
        self.refused_answers = 0
        self.links_accepted = 0
        self.links_refused = 0
        self.links_lost = 0
        self.links_over_limit = 0
        self.connections_over_cap = 0


class EndpointCore:
    def __init__(self, kind, registry, domain, label, pc=None, security=None, on_message=None, exact=False,
                 host="127.0.0.1", policy=BLOCK, block_timeout=10.0, request_timeout=30.0, ping_interval=15.0,
                 lease=30.0, max_queued_bytes=8 << 20, max_queued_messages=65536,
                 max_message_bytes=_wire.DEFAULT_MAX_MESSAGE_BYTES, attributes=None, identity=None,
                 max_links=DEFAULT_MAX_LINKS):
        if policy not in (BLOCK, FAIL, DROP_OLDEST):
            raise ValueError("policy %r is not BLOCK, FAIL or DROP_OLDEST" % (policy,))
        if not 1 <= max_queued_messages <= 65536:
            raise ValueError("max_queued_messages %d is outside 1..65536" % max_queued_messages)
        if not 1 <= max_links <= 100000:
            raise ValueError("max_links %d is outside 1..100000" % max_links)
        for what, v in (("block_timeout", block_timeout), ("request_timeout", request_timeout),
                        ("ping_interval", ping_interval), ("lease", lease)):
            if v <= 0:
                raise ValueError("%s %s is not positive" % (what, v))
        self.kind = kind
        self.domain = domain
        self.label = label
        self.exact = exact
        self.host = host
        self.policy = policy
        self.block_timeout = block_timeout
        self.request_timeout = request_timeout
        self.ping_interval = ping_interval
        self.lease = lease
        self.max_queued_bytes = max_queued_bytes
        self.max_queued_messages = max_queued_messages
        self.max_message_bytes = max_message_bytes
        self.max_links = max_links
        self.handler = on_message
        self.security = security
        # whether a message's sender must be its link's peer (receive): a reply's fast path checks it first
        self._checks_senders = security is not None and security.authenticates
        self.counters = Counters()
        self._closed = False
        self._lock = threading.Lock()
        self._peers = {}
        self._links = set()
        # accepted connections in their handshake (each a thread); links peers opened, open or admitted
        self._handshaking = 0
        self._accepted_open = 0
        self._addresses = {}
        self._dedup = _Dedup()
        self._requests = {}
        self._subscribers = collections.OrderedDict()
        self._sub_lock = threading.Lock()
        self._timers = []
        self._timer_lock = threading.Lock()
        self._lost_lease_at = None
        self._pc_address = _host_port(pc) if pc else None
        self._uplink = None
        self.tables = _tables.Mediator(self)
        self.published = _tables.Publisher(self)
        self._registry = RegistryClient(
            registry, ssl_context=security.client_context() if security else None,
            authorization=(lambda: security.bearer("registry")) if security and security.authenticates else None)
        # listening first: its port is what the registry is told
        self._server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self._server.bind((host, 0))
        self._server.listen(128)
        self.port = self._server.getsockname()[1]
        self._attributes = dict(attributes or {})
        try:
            self.name = self._registry.register(label, kind, domain, host, self.port, exact=exact,
                                                lease_seconds=int(lease), attributes=self._attributes)
        except RegistryError as e:
            self._server.close()
            raise GmaError(e.code, "register %s@%s: %s" % (label, domain, e.sentence)) from None
        self._name_bytes = self.name.encode("utf-8")
        if exact:
            self._seq = itertools.count(int(time.time() * 1000) << 20)
        else:
            self._seq = itertools.count(1)
        if self._pc_address:
            self._uplink = self._named(_PCH + domain)
        self._stop = threading.Event()
        self._start_thread(self._accept_loop, "gma-%s-accept" % label)
        self._start_thread(self._tick_loop, "gma-%s-ticker" % label)
        self._start_thread(self._lease_loop, "gma-%s-lease" % label)
        if self._uplink is not None:
            self._connect(self._uplink)

    @staticmethod
    def _start_thread(target, name):
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        return t

    # ------------------------------------------------------------------ logging, for links

    def log_warning(self, text):
        LOG.warning(text)

    def log_info(self, text):
        LOG.info(text)

    # ------------------------------------------------------------------ peers

    def _named(self, name):
        with self._lock:
            p = self._peers.get(name)
            if p is None:
                p = self._peers[name] = _Peer(name, self.max_queued_bytes, self.max_queued_messages)
            return p

    def _peer(self, to):
        """The peer a message to ``to`` goes to: the one of that name, or the uplink for another domain."""
        if self._closed:
            raise GmaError(ErrorCode.SHUTTING_DOWN, "%s is closed" % self.name)
        p = self._peers.get(to)
        if p is not None and not p.forgotten:
            return p
        if not to or to == self.name:
            raise ValueError('destination "%s" is empty or this endpoint itself' % to)
        at = to.rfind("@")
        domain = to[at + 1:] if at >= 0 else ""
        if domain != self.domain:
            if self._uplink is None:
                raise GmaError(ErrorCode.NO_ROUTE, "%s is in domain %s; %s has no PC servlet (pc=\"host:port\","
                               " --pc on the command line) and reaches only its own domain, %s"
                               % (to, domain, self.name, self.domain))
            return self._uplink
        return self._named(to)

    def _forget(self, peer):
        peer.forgotten = True
        with self._lock:
            if self._peers.get(peer.name) is peer:
                del self._peers[peer.name]

    # ------------------------------------------------------------------ sending

    def _pack(self, peer, seq, command, to, data, flags=None):
        tb = peer.to_bytes.get(to)
        if tb is None:
            tb = _wire.encode_name("to", to)
            _wire.pack(seq, command, self._name_bytes, tb, data, flags)  # the full checks, once per name
            peer.remember_name(to, tb)
        if command == _ACK or command == _HELLO:
            return _wire.pack(seq, command, self._name_bytes, tb, data, flags)
        # both names are non-empty and checked, the command known: what the checks would pass
        fb = self._name_bytes
        if flags is None:
            flags = 1 if command == _REQUEST else 0
        return _HEADER_PACK(b"GM", 1, command, flags, len(fb), len(tb), 0, seq, len(data)) + fb + tb + data

    def _policy(self):
        """BLOCK on a link's reader thread would stop the very reads whose ACKs make room: FAIL there."""
        if self.policy == BLOCK and _link.reading():
            return FAIL
        return self.policy

    def send(self, to, command, data, sequence=None):
        """Queues a data-lane message; its Sent. Raises GmaError QUEUE_FULL, NO_ROUTE, SHUTTING_DOWN.

        Every streamed message runs this, so its common case is written out here (docs/python.md, "How it
        works"): the destination's peer found by name, the message packed from its form (the header's first 8
        bytes and the two names, made once per destination and command), queued when there is room without
        looking at the policy, and the writer thread woken only when it is idle."""
        peer = self._peers.get(to)
        if peer is None or peer.forgotten or self._closed:
            peer = self._peer(to)
        seq = next(self._seq) if sequence is None else sequence
        if type(data) is not bytes:
            data = bytes(data)
        form = peer.forms.get(to)
        if form is None or form[0] != command:
            form = self._form(peer, seq, command, to, data)
        packed = _join((form[1], _SEQ_LENGTH_PACK(seq, len(data)), form[2], data))
        sent = Sent(seq)
        queue = peer.queue
        unsent = queue.offer(packed, sent)
        if unsent < 0:  # no room (or closed): as the policy says
            unsent = queue.offer_data(packed, sent, self._policy(), self.block_timeout)
        self.counters.sent += 1
        link = queue.carrier
        if link is None:
            self._connect(peer)
        elif sequence is None and unsent < _WRITE_HERE_BYTES:
            if link._writer_idle:
                link.kick()  # streaming: the link's writer thread writes in batches
        else:
            link.flush()  # a request: written now, on this thread
        return sent

    def _form(self, peer, seq, command, to, data):
        """How a data message to ``to`` with ``command`` begins (the header's first 8 bytes: magic, version,
        command, flags, the names' lengths, the reserved byte) and its two names, as ``send`` packs it; made
        by ``_pack``, whose checks it passes once per name."""
        whole = self._pack(peer, seq, command, to, data)
        tb = peer.to_bytes[to]
        form = peer.forms[to] = (command, whole[:8], self._name_bytes + tb)
        return form

    def send_control(self, to, command, seq, data):
        """Queues a control message (REPLY, ERROR, UNSUBSCRIBE): never bounded, never behind data."""
        peer = self._peer(to)
        peer.queue.offer_control(self._pack(peer, seq, command, to, data))
        self._transmit(peer)

    def next_sequence(self):
        return next(self._seq)

    def _transmit(self, peer):
        link = peer.queue.carrier
        if link is not None:
            link.flush()
        else:
            self._connect(peer)

    # ------------------------------------------------------------------ requests

    def request(self, to, data, timeout=None, command=Command.REQUEST):
        """Sends a REQUEST and waits for its answer (the reply's bytes, or the GmaError).

        The common case is short (docs/python.md, "How it works"): the REQUEST goes straight to the socket
        and the queue's in-flight lane when nothing else waits to be written (``Link.write_taken``), and the
        calling thread reads its REPLY itself (``Link.await_reply``); otherwise it is queued as any message,
        under the policy, and written or connected for as ``send`` does."""
        if timeout is None:
            timeout = self.request_timeout
        if getattr(_READING, "on", False):
            raise RuntimeError("request() waits for a reply that this very thread would read: call it from"
                               " another thread than a message handler's")
        peer = self._peers.get(to)
        if peer is None or peer.forgotten or self._closed:
            peer = self._peer(to)
        seq = next(self._seq)
        now = _monotonic()
        aw = _Awaited(self, to, timeout, seq, now + timeout)
        self._requests[seq] = aw
        queue = peer.queue
        link = queue.carrier
        try:
            packed = self._pack(peer, seq, command, to, data)
            if link is None or not link.write_taken(packed, aw, queue, now):
                queue.offer_data(packed, aw, self.policy, self.block_timeout)  # not a link's thread: as _policy
                link = queue.carrier
                if link is None:
                    self._connect(peer)
                else:
                    link.flush()
        except BaseException:
            self._requests.pop(seq, None)
            raise
        self.counters.sent += 1
        if link is not None:
            expect = peer.replies.get(to)
            if expect is None:
                expect = self._reply_form(peer, to)
            if self._checks_senders and link.peer_name != to and peer is not self._uplink:
                expect = None  # receive() decides (an impostor's reply is refused there)
            link.await_reply(aw, expect)
        if not aw.done and not aw.wait(max(0.0, aw.deadline - _monotonic()) + 1.0):
            self._fail_request(seq, self._timeout_error(aw, timeout))
        if aw.error is not None:
            raise aw.error
        return aw.reply

    def _reply_form(self, peer, to):
        """How ``to``'s REPLY to this endpoint begins: its header's first 8 bytes (magic, version, REPLY, no
        flags, the names' lengths, the reserved byte), the two names, and where its data starts."""
        tb = peer.to_bytes.get(to) or _wire.encode_name("to", to)
        fb = self._name_bytes
        form = peer.replies[to] = (_HEADER_PACK(b"GM", 1, Command.REPLY, 0, len(tb), len(fb), 0, 0, 0)[:8],
                                   tb + fb, _wire.HEADER_BYTES + len(tb) + len(fb))
        return form

    @staticmethod
    def _timeout_error(aw, timeout):
        return GmaError(ErrorCode.TIMEOUT, "no reply from %s to request %d within %d ms"
                        % (aw.to, aw.sequence, int(timeout * 1000)))

    def _fail_request(self, seq, error):
        aw = self._requests.pop(seq, None)
        if aw is not None:
            aw.finish(error=error)

    # ------------------------------------------------------------------ subscribers

    def add_subscriber(self, name, filter_text=None):
        with self._sub_lock:
            self._subscribers[name] = filter_text or ""

    def remove_subscriber(self, name):
        with self._sub_lock:
            return self._subscribers.pop(name, None) is not None

    def subscribers(self):
        with self._sub_lock:
            return dict(self._subscribers)

    def publish(self, data, accept=None):
        out = []
        for name, f in self.subscribers().items():
            if accept is not None and not accept(f):
                continue
            try:
                out.append(self.send(name, Command.DATA, data))
            except GmaError as e:
                out.append(_failed_sent(0, e))
        return out

    # ------------------------------------------------------------------ links: making them

    def _connect(self, peer):
        with peer.lock:
            if self._closed or peer.connecting or peer.queue.carrier is not None:
                return
            peer.connecting = True
        self._start_thread(lambda: self._connect_run(peer), "gma-%s-connect" % self.label)

    def _credential(self, peer):
        if self.security is None or not self.security.authenticates:
            return b""
        audience = self.domain if peer is self._uplink else peer.name
        return (self.security.bearer(audience) or "").encode("utf-8")

    def _connect_run(self, peer):
        try:
            if peer is self._uplink:
                address = self._pc_address
            else:
                address = self._resolve(peer.name)
            tls = self.security.client_context() if self.security is not None else None
            link, rest = _handshake.connect(address, self.name, self._credential(peer), self, self.ping_interval,
                                       self.max_message_bytes, tls, server_hostname=address[0],
                                       expected=peer.name)
        except GmaError as e:
            with peer.lock:
                peer.connecting = False
            self._addresses.pop(peer.name, None)
            if e.code == ErrorCode.NO_ROUTE and self._settled():
                self._unreachable(peer, e)
            elif e.code in (ErrorCode.UNAUTHORIZED, ErrorCode.FORBIDDEN):
                self._refused(peer, e)
            else:
                self._retry(peer, e, False)
            return
        except Exception as e:
            with peer.lock:
                peer.connecting = False
            self._retry(peer, GmaError(ErrorCode.INTERNAL, "cannot connect to %s: %s" % (peer.name, e)), False)
            return
        with peer.lock:
            peer.connecting = False
        self._opened(peer, link, rest)

    def _resolve(self, name):
        a = self._addresses.get(name)
        if a is not None:
            return a
        try:
            e = self._registry.lookup(name)
        except RegistryError as ex:
            raise GmaError(ex.code, "look up %s: %s" % (name, ex.sentence)) from None
        a = self._addresses[name] = (e["host"], int(e["port"]))
        return a

    def _settled(self):
        """Whether the registry's "not registered" is final: not within a lease of this endpoint's lost
        lease (the registry restarted, and peers may not have registered again yet)."""
        lost = self._lost_lease_at
        return lost is None or time.monotonic() - lost > self.lease

    def _unreachable(self, peer, why):
        """The registry says the peer is gone: what was queued for it fails, and it stops being a
        subscriber."""
        self._forget(peer)
        self.remove_subscriber(peer.name)
        self.published.drop_consumer(peer.name)
        peer.queue.close(why)
        for seq, aw in list(self._requests.items()):
            if aw.to == peer.name:
                self._fail_request(seq, why)

    def _refused(self, peer, why):
        if peer is self._uplink:
            LOG.error("%s: the PC servlet at %s:%s refused the uplink: %s; messages for other domains fail",
                      self.name, self._pc_address[0], self._pc_address[1], why.sentence)
            peer.queue.close(why)
            return
        self._forget(peer)
        peer.queue.close(why)

    def _retry(self, peer, why, worked):
        if self._closed:
            return
        delay = peer.backoff(worked)
        if peer is self._uplink and not worked:
            LOG.warning("%s: cannot reach the PC servlet at %s:%s (%s): is gma pc running there, and is that its"
                        " --uplink-port? Trying again in %d ms", self.name, self._pc_address[0],
                        self._pc_address[1], why.sentence, delay)
        else:
            LOG.debug("%s: %s; next attempt in %d ms", self.name, why.sentence, delay)
        if delay == 0:
            self._connect(peer)
        else:
            self._schedule(delay / 1000.0, lambda: self._connect(peer))

    def _accept_loop(self):
        while not self._closed:
            try:
                sock, _ = self._server.accept()
            except OSError:
                if self._closed:
                    return
                time.sleep(0.05)
                continue
            with self._lock:
                over = self._handshaking >= MAX_HANDSHAKES
                if not over:
                    self._handshaking += 1
            if over:
                # a thread each: a flood of connections that never say HELLO must not grow them without bound
                self.counters.connections_over_cap += 1
                LOG.debug("%s: closed a connection at once: %d are in their handshake, the most", self.name,
                          MAX_HANDSHAKES)
                sock.close()
                continue
            try:
                self._start_thread(lambda s=sock: self._accept_run(s), "gma-%s-handshake" % self.label)
            except RuntimeError as e:  # no thread to be had
                with self._lock:
                    self._handshaking -= 1
                LOG.warning("%s: closed a connection: no thread for its handshake (%s)", self.name, e)
                sock.close()

    def _accept_run(self, sock):
        admitted = []
        try:
            self._accept_link(sock, admitted)
        finally:
            with self._lock:
                self._handshaking -= 1
                self._accepted_open -= len(admitted)  # a place not given over to a link: refused, or gone

    def _accept_link(self, sock, admitted):
        tls = self.security.server_context() if self.security is not None else None
        if self.security is not None and tls is None:
            # secured, without a certificate to serve TLS with: no plaintext link, and nothing to say in it
            LOG.warning("%s: refused a link: security is on, and this endpoint has no certificate in PEM to serve"
                        " TLS with (docs/python.md, \"Security\")", self.name)
            self.counters.links_refused += 1
            sock.close()
            return
        got = _handshake.accept(sock, self.name, self, self.ping_interval, self.max_message_bytes,
                                lambda hello, transport: self._admit(hello, transport, admitted), tls)
        if got is None:
            self.counters.links_refused += 1
            return
        self.counters.links_accepted += 1
        link, rest = got
        self._opened(None, link, rest, admitted)

    def _admit(self, hello, transport, admitted):
        """The identity of a peer saying HELLO, or GmaError UNAUTHORIZED / FORBIDDEN, or QUEUE_FULL when
        ``max_links`` are open (the peer tries again after its back-off); ``admitted`` holds the link's place."""
        if self.security is None or not self.security.authenticates:
            identity = "anonymous"
        else:
            identity = self.security.admit(hello, transport.peer_identity(), self.name, self._registry)
        with self._lock:
            if self._accepted_open >= self.max_links:
                self.counters.links_over_limit += 1
                raise GmaError(ErrorCode.QUEUE_FULL, "%s has %d links open, its most (max_links %d): try again"
                               " later" % (self.name, self._accepted_open, self.max_links))
            self._accepted_open += 1
            admitted.append(True)
        return identity

    # ------------------------------------------------------------------ links: opened, closed

    def _opened(self, peer, link, rest, admitted=None):
        """A link finished its handshake: it carries ``peer``'s messages, or an accepted link's peer's (whose
        place ``admitted`` held, given over to the link now)."""
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._links.add(link)
                if admitted:
                    admitted.clear()  # its place is the link's now, until link_closed gives it back
                    link.counted = True
        if closed:
            link.bye()
            return
        if peer is None and link.peer_name:
            peer = self._named(link.peer_name)
        link.peer = peer
        if peer is not None:
            with peer.lock:
                peer.links.append(link)
            if peer.queue.attach(link):
                link.queue = peer.queue
        link.start(rest)
        link.flush()

    def link_closed(self, link, why):
        with self._lock:
            if link in self._links:
                self._links.discard(link)
                if link.counted:
                    self._accepted_open -= 1
        if self._closed:
            return
        if why is None or why.code != ErrorCode.SHUTTING_DOWN:
            self.counters.links_lost += 1
        peer = link.peer
        if peer is None:
            return
        with peer.lock:
            if link in peer.links:
                peer.links.remove(link)
            others = [l for l in peer.links if not l.closed]
        if not peer.queue.detach(link):
            return
        for other in others:
            if peer.queue.attach(other):
                other.queue = peer.queue
                other.flush()
                return
        if not peer.queue.is_empty() or peer is self._uplink:
            self.counters.reconnects += 1
            self._retry(peer, why or GmaError(ErrorCode.INTERNAL, "link closed"), link.worked)

    def said_bye(self, link):
        if link.peer_name:
            self._dedup.forget(link.peer_name)
            self.published.drop_consumer(link.peer_name)  # its queries end with it

    # ------------------------------------------------------------------ receiving

    def receive(self, link, m):
        """A counted message arrived on ``link`` (its reader thread)."""
        self.counters.received += 1
        peer = link.peer
        if (self.security is not None and self.security.authenticates and peer is not self._uplink
                and m.sender != link.peer_name):
            self._impostor(link, m)
            return
        c = m.command
        answer = c == Command.REPLY or c == Command.ERROR
        if m.to != self.name:
            if not answer:
                self._error(m.sender, m.sequence, ErrorCode.NO_ROUTE, "this is %s, not %s; an endpoint does not"
                            " route" % (self.name, m.to))
            return
        if answer:
            self._answer(m, peer, link)
            return
        seen = link.seen
        if seen is None or seen.sender != m.sender or seen.forgotten:
            # a link's messages come from one sender: its record is kept on the link, not looked up each time
            seen = link.seen = self._dedup.of(m.sender)
        with seen.lock:
            if not seen.add(m.sequence):
                self.counters.duplicates += 1
                if m.flags & _wire.REPLY_EXPECTED and c != Command.REQUEST:
                    self._receipt(m)
                return
            self._dispatch(m)

    def _impostor(self, link, m):
        sentence = '"%s" is not the name this link\'s peer said in HELLO, "%s"' % (m.sender, link.peer_name)
        LOG.info("%s: refused %s %d: %s", self.name, Command.name(m.command), m.sequence, sentence)
        if link.peer_name and m.command not in (Command.REPLY, Command.ERROR):
            self._error(link.peer_name, m.sequence, ErrorCode.FORBIDDEN, sentence)

    def _dispatch(self, m):
        c = m.command
        if c == Command.SUBSCRIBE:
            self.add_subscriber(m.sender, m.text())
        elif c == Command.UNSUBSCRIBE:
            self.remove_subscriber(m.sender)
        elif c == Command.TABLE_ROW or c == Command.TABLE_ROWS:
            self.tables.receive(m)  # rows for one of this consumer's continuous queries
        elif Command.TABLE_QUERY <= c <= Command.TABLE_HISTORY:  # TABLE_ROWS, 0x45, is a consumer's
            # monitoring tables' commands are the endpoint's own (docs/tables.md), not the application's
            self.published.receive(m)
            return
        else:
            self._deliver(m)
            return
        if m.flags & _wire.REPLY_EXPECTED:
            self._receipt(m)

    def _deliver(self, m):
        handler = self.handler
        wants = m.flags & _wire.REPLY_EXPECTED
        if handler is None:
            if wants:
                self._error(m.sender, m.sequence, ErrorCode.INTERNAL, "%s has no message handler" % self.name)
            return
        try:
            handler(Incoming(self, m))
        except Exception as e:  # the handler's failure is this message's, not the link's
            LOG.warning("%s: handler failed on %s from %s: %r", self.name, Command.name(m.command), m.sender, e)
            if wants:
                self._error(m.sender, m.sequence, ErrorCode.INTERNAL, "the handler of %s failed: %r"
                            % (self.name, e))
            return
        if wants and m.command != Command.REQUEST:
            self._receipt(m)

    def _receipt(self, m):
        """Says to the sender that its message was taken: an empty REPLY with its sequence."""
        try:
            self.send_control(m.sender, Command.REPLY, m.sequence, _NO_DATA)
        except (GmaError, ValueError) as e:
            LOG.debug("%s: could not send the receipt of %d to %s: %s", self.name, m.sequence, m.sender, e)

    def _answer(self, m, peer, link=None):
        """A REPLY or ERROR: it completes the request it answers, if it may. An ERROR that is the uplink's
        refusal of the message it answers (:meth:`_refused_by_uplink`) fails that message's Sent at the ACK
        that passes it, which the PC servlet writes after the ERROR (protocol.md section 4)."""
        if m.command == Command.ERROR and peer is not None and peer is self._uplink and link is not None:
            code, _ = parse_error_text(m.text())
            if self._refused_by_uplink(m.sender, code):
                peer.queue.refused(link, m.sequence, GmaError(code, "%s answered ERROR %s" % (m.sender, m.text())))
        aw = self._requests.get(m.sequence)
        if aw is None:
            if m.command == Command.ERROR:
                code, _ = parse_error_text(m.text())
                if code == ErrorCode.NO_ROUTE:
                    self.tables.dropped(m.sender)
                    self.published.drop_consumer(m.sender)
                if code == ErrorCode.NO_ROUTE and self.remove_subscriber(m.sender):
                    LOG.info("%s: dropped subscriber %s: %s", self.name, m.sender, m.text())
                else:
                    LOG.warning("%s: %s reported an error on message %d: %s", self.name, m.sender, m.sequence,
                                m.text())
            else:
                self.counters.duplicates += 1
            return
        from_pc = (m.command == Command.ERROR and peer is not None and peer is self._uplink
                   and m.sender == self._uplink.name)
        if m.sender != aw.to and not from_pc:
            self.counters.refused_answers += 1
            LOG.warning("%s: refused an answer to request %d from %s: it went to %s", self.name, m.sequence,
                        m.sender, aw.to)
            return
        if self._requests.pop(m.sequence, None) is None:
            return
        if m.command == Command.REPLY:
            aw.finish(reply=m.data)
        else:
            text = m.text()
            aw.finish(error=GmaError(parse_error_text(text)[0], "%s answered ERROR %s" % (m.sender, text)))

    def _refused_by_uplink(self, sender, code):
        """Whether an ERROR on the uplink is the PC servlet's refusal of the message it answers, written before
        the ACK that passes it (docs/pcservlet.md), as Java's Inbox.refusedByUplink: one from the PC servlet
        itself (a send rule, a name with no domain), or QUEUE_FULL from a destination in another domain whose
        share of its queue is taken. Not the answers that come from further on (a destination gone, refused by
        another domain): those leave the ACK as it is."""
        return sender == self._uplink.name or (code == ErrorCode.QUEUE_FULL and not _in_domain(sender, self.domain))

    def _error(self, to, seq, code, sentence):
        try:
            self.send_control(to, Command.ERROR, seq, ("%s %s" % (code, sentence)).encode("utf-8"))
        except (GmaError, ValueError) as e:
            LOG.debug("%s: could not report %s to %s: %s", self.name, code, to, e)

    # ------------------------------------------------------------------ timers, lease

    def _schedule(self, delay, fn):
        with self._timer_lock:
            heapq.heappush(self._timers, (time.monotonic() + delay, id(fn), fn))

    def _tick_loop(self):
        while not self._stop.wait(0.01):
            now = time.monotonic()
            with self._lock:
                links = list(self._links)
            for link in links:
                try:
                    link.tick(now)
                except Exception as e:
                    LOG.debug("%s: tick of %s: %r", self.name, link.peer_name, e)
            for seq, aw in list(self._requests.items()):
                if now >= aw.deadline:
                    self._fail_request(seq, self._timeout_error(aw, aw.timeout))
            due = []
            with self._timer_lock:
                while self._timers and self._timers[0][0] <= now:
                    due.append(heapq.heappop(self._timers)[2])
            for fn in due:
                try:
                    fn()
                except Exception as e:
                    LOG.warning("%s: timer task failed: %r", self.name, e)

    def _lease_loop(self):
        every = max(0.5, self.lease / 3.0)
        while not self._stop.wait(every):
            if self._closed:
                return
            try:
                self._registry.renew(self.name)
            except RegistryError as e:
                if e.status == 404 and not self._closed:
                    self._lost_lease_at = time.monotonic()
                    self._register_again()
                else:
                    LOG.warning("%s: lease renewal failed, will retry: %s", self.name, e.sentence)

    def _register_again(self):
        """Registers the same name again (its nonce), so that peers' routes stay valid."""
        nonce = None
        if not self.exact:
            nonce = self.name[len(self.label) + 1:self.name.rfind("@")]
        try:
            self._registry.register(self.label, self.kind, self.domain, self.host, self.port, exact=self.exact,
                                    lease_seconds=int(self.lease), attributes=self._attributes, nonce=nonce)
            LOG.info("%s: lease was lost; registered again", self.name)
            self.published.republish()
        except RegistryError as e:
            LOG.warning("%s: lease lost and registering again failed: %s", self.name, e.sentence)

    # ------------------------------------------------------------------ the rest

    def query(self, sql):
        try:
            return self._registry.query(sql)
        except RegistryError as e:
            raise GmaError(e.code, "query: %s" % e.sentence) from None

    def stats(self):
        c = self.counters
        queued = [p.queue.size() for p in list(self._peers.values())]
        return {"sent": c.sent, "received": c.received, "duplicates": c.duplicates, "reconnects": c.reconnects,
                "refused_answers": c.refused_answers, "links_accepted": c.links_accepted,
                "links_refused": c.links_refused, "links_lost": c.links_lost,
                "links_over_limit": c.links_over_limit, "connections_over_cap": c.connections_over_cap, "queued_messages": sum(q[0] for q in queued),
                "queued_bytes": sum(q[1] for q in queued), "links": len(self._links),
                "drops": sum(p.queue.drops for p in list(self._peers.values()))}

    def remembers(self, sender):
        return self._dedup.remembers(sender)

    def sever_links(self):
        """Cuts every link at once, without BYE, as a network failure would: for tests of resending."""
        with self._lock:
            links = list(self._links)
        for link in links:
            link.fail(GmaError(ErrorCode.INTERNAL, "link cut"))

    def close(self):
        """Unregisters, says BYE on every link, fails what is still queued with SHUTTING_DOWN."""
        if not self._closed:
            self.tables.close()  # its TABLE_CANCELs go out before the BYEs
        with self._lock:
            if self._closed:
                return
            self._closed = True
            links = list(self._links)
        try:
            self._registry.unregister(self.name)
        except RegistryError as e:
            LOG.debug("%s: unregister failed: %s", self.name, e.sentence)
        for link in links:
            link.bye()
        shutdown = GmaError(ErrorCode.SHUTTING_DOWN, "%s closed" % self.name)
        for p in list(self._peers.values()):
            p.queue.close(shutdown)
        for seq in list(self._requests):
            self._fail_request(seq, shutdown)
        self._stop.set()
        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()


def _in_domain(name, domain):
    """Whether ``name`` is in ``domain`` (after its last "@"; a name without one is a domain), as Java's
    Name.inDomain."""
    at = len(name) - len(domain) - 1
    return name[at] == "@" and name.endswith(domain) if at >= 0 else name == domain


def _host_port(value, default_host="127.0.0.1"):
    """``host:port`` or ``port`` as a (host, port) pair."""
    value = str(value)
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError('"%s" is not host:port' % value)
    return (host.strip("[]") or default_host, int(port))
