"""A peer's send queue (protocol.md section 4): what is not written yet plus what is not acknowledged yet.

Lanes, in the order a link takes them::

    resend   what a lost link had written and the peer had not acknowledged, in its original order
    control  REPLY, ERROR, UNSUBSCRIBE: never bounded, never behind data
    data     DATA, REQUEST, SUBSCRIBE, application commands: bounded by bytes and messages
    inflight written on the carrying link, waiting for its ACK

The bounds count a data message from the moment it is queued until it is
acknowledged, so a slow peer fills the queue and the sender blocks, fails or
drops its oldest unsent message, as the endpoint's policy says. One lock (a
Condition); no I/O and no callback under it.

A refusal comes before the ACK (protocol.md section 4): a PC servlet's uplink
that takes a message only to refuse it writes the ERROR for it before the ACK
that passes it. The endpoint hands such an ERROR to :meth:`SendQueue.refused`,
and the ACK then fails that message's Sent with it instead of completing it.
At most MAX_REFUSED refusals are remembered, and a lost link forgets them (what
it had in flight goes again on the next link, which answers afresh), as Java's
AckWatch.
"""

import collections
import operator
import threading
import time

from ._errors import ErrorCode, GmaError

BLOCK = "BLOCK"
FAIL = "FAIL"
DROP_OLDEST = "DROP_OLDEST"
#: Each lane holds (packed bytes, its Sent or _Awaited or None, its size counted against the bounds: 0 for
#: control messages, which are not bounded).
_SIZE = operator.itemgetter(2)
#: Refusals remembered at most (the oldest go first): a peer refuses what is in flight, and a window holds
#: 65,536 messages at most.
MAX_REFUSED = 65536


class Sent:
    """What became of a message: its ``sequence``, and :meth:`acknowledged` to wait for the first hop's ACK."""

    __slots__ = ("sequence", "_event", "_error", "_callbacks")
    completes_on_ack = True  # an ACK completes it (a request's _Awaited waits for its answer instead)

    def __init__(self, sequence):
        self.sequence = sequence
        self._event = None
        self._error = None
        self._callbacks = None

    def acknowledged(self, timeout=None):
        """Waits until the peer (the first hop: the destination, or this domain's PC servlet) acknowledged
        the message. Raises GmaError with the code of its failure (QUEUE_FULL when dropped under DROP_OLDEST,
        SHUTTING_DOWN, UNAUTHORIZED, ...), or TIMEOUT when ``timeout`` seconds passed first (it may still be
        acknowledged later). A message this domain's PC servlet refused (its ERROR came before the ACK that
        passes it: NO_ROUTE, FORBIDDEN, or QUEUE_FULL for a full destination in another domain) was not
        acknowledged: this raises GmaError with that ERROR's code, whenever it is asked."""
        ev = self._event
        if ev is None:
            with _EVENTS:
                if self._event is None:
                    self._event = threading.Event()
                    if self._error is not None or _is_done(self):
                        self._event.set()
                ev = self._event
        if not ev.wait(timeout):
            raise GmaError(ErrorCode.TIMEOUT, "message %d not acknowledged within %s s" % (self.sequence, timeout))
        if self._error is not None and self._error is not _OK:
            raise self._error

    def done(self):
        """Whether it was acknowledged or failed."""
        return self._error is not None

    def add_done_callback(self, fn):
        """Calls ``fn(error_or_None)`` once it is acknowledged (None) or failed (the GmaError)."""
        with _EVENTS:
            if self._callbacks is None:
                self._callbacks = []
            self._callbacks.append(fn)
        if self._error is not None:
            self._run_callbacks()

    def _complete(self, error=None):
        # no lock on the common path (nobody waits, no callback): an ACK completes many at once
        if self._error is not None:
            return
        self._error = _OK if error is None else error
        self._woken()

    def _woken(self):
        """Done now (``_error`` set): its waiter and callbacks hear of it. Set before they are looked for, as
        ``acknowledged`` makes its event before it looks at ``_error``: one of the two sees the other."""
        ev = self._event
        if ev is not None:
            ev.set()
        if self._callbacks is not None:
            self._run_callbacks()

    def _run_callbacks(self):
        with _EVENTS:
            cbs, self._callbacks = self._callbacks, None
        if cbs:
            err = None if self._error is _OK else self._error
            for fn in cbs:
                fn(err)

    def __repr__(self):
        return "Sent #%d" % self.sequence


_EVENTS = threading.Lock()
_OK = object()


def _is_done(sent):
    return sent._error is not None


def failed(sequence, error):
    """A Sent that failed before it was queued."""
    s = Sent(sequence)
    s._error = error
    return s


class SendQueue:
    """One peer's queue; it outlives links. ``carrier`` is the link that takes from it and acknowledges."""

    def __init__(self, peer, max_bytes=8 << 20, max_messages=65536):
        self.peer = peer
        self.max_bytes = max_bytes
        self.max_messages = max_messages
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)  # for BLOCK: waits for room
        self._blocked = 0
        self._resend = collections.deque()
        self._control = collections.deque()
        self._data = collections.deque()
        self._inflight = collections.deque()
        self._bytes = 0  # data queued and not acknowledged
        self._unsent = 0  # data queued and not taken by a link
        self._count = 0
        self._closed = None
        self._refused = {}  # sequence -> GmaError: refused before the ACK that passes it, oldest first
        self.carrier = None
        self.drops = 0
        self.waits = 0

    # ------------------------------------------------------------------ offering

    def offer_data(self, packed, sent, policy, block_seconds):
        """Queues a data message under the policy: True when queued. Raises GmaError QUEUE_FULL (FAIL, or
        BLOCK after ``block_seconds``), or the reason the queue was closed. Under DROP_OLDEST it drops the
        oldest unsent data to make room, or this message when everything queued is in flight already (False:
        ``sent`` failed with QUEUE_FULL), as Java's SendQueue does. Returns the data bytes queued and not
        taken by a link yet, this message's included; -1 when it was dropped."""
        size = len(packed)
        if size > self.max_bytes:
            raise GmaError(ErrorCode.QUEUE_FULL, "message of %d bytes exceeds maxQueuedBytes %d"
                           % (size, self.max_bytes))
        dropped = []
        queued = True
        unsent = 0
        with self._lock:
            if self._closed is not None:
                raise self._closed
            if self._count >= self.max_messages or self._bytes + size > self.max_bytes:  # not _fits
                if policy == FAIL:
                    raise self._full()
                if policy == DROP_OLDEST:
                    while not self._fits(size) and self._data:
                        p, s, _ = self._data.popleft()
                        self._bytes -= len(p)
                        self._count -= 1
                        dropped.append(s)
                    queued = self._fits(size)
                    if not queued:
                        dropped.append(sent)
                    self.drops += len(dropped)
                else:
                    self.waits += 1
                    deadline = time.monotonic() + block_seconds
                    while not self._fits(size):
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise GmaError(ErrorCode.QUEUE_FULL, "the send queue for %s stayed full for %s s"
                                           " (maxQueuedBytes %d, maxQueuedMessages %d)"
                                           % (self.peer, block_seconds, self.max_bytes, self.max_messages))
                        self._blocked += 1
                        try:
                            self._cond.wait(left)
                        finally:
                            self._blocked -= 1
                        self._check_open()
            if queued:
                self._data.append((packed, sent, size))
                self._bytes += size
                self._count += 1
                self._unsent += size
                unsent = self._unsent
        if dropped:
            err = GmaError(ErrorCode.QUEUE_FULL, "dropped under DROP_OLDEST: the send queue for %s was full"
                           % self.peer)
            for s in dropped:
                s._complete(err)
        return unsent if queued else -1

    def offer(self, packed, sent):
        """Queues a data message when there is room and the queue is open (the common case, without the
        policy): the data bytes queued and not taken by a link yet, this message's included. -1, having queued
        nothing, otherwise: the caller then offers it under the policy (:meth:`offer_data`)."""
        size = len(packed)
        lock = self._lock
        lock.acquire()  # not "with": its __enter__ and __exit__ cost twice the lock itself, on every message
        try:
            if self._closed is not None or self._count >= self.max_messages or self._bytes + size > self.max_bytes:
                return -1
            self._data.append((packed, sent, size))
            self._bytes += size
            self._count += 1
            unsent = self._unsent = self._unsent + size
        finally:
            lock.release()
        return unsent

    def offer_taken(self, link, packed, sent):
        """A data message that ``link`` writes at once, under its write lock (``Link.write_taken``): straight
        to in flight, counted against the bounds as any data. False, having queued nothing, when ``link`` is
        not the carrier, the queue is closed, other messages wait to be written (they go first), or there is
        no room (the caller then offers it under the policy)."""
        size = len(packed)
        with self._lock:
            if (link is not self.carrier or self._closed is not None or self._resend or self._control or self._data
                    or self._count >= self.max_messages or self._bytes + size > self.max_bytes):
                return False
            self._inflight.append((packed, sent, size))
            self._bytes += size
            self._count += 1
        return True

    def offer_control(self, packed):
        """Queues a control message: never bounded."""
        with self._lock:
            self._check_open()
            self._control.append((packed, None, 0))

    def _fits(self, size):
        return self._count < self.max_messages and self._bytes + size <= self.max_bytes

    def _full(self):
        return GmaError(ErrorCode.QUEUE_FULL, "the send queue for %s is full (%d messages, %d bytes queued;"
                        " maxQueuedBytes %d, maxQueuedMessages %d)" % (self.peer, self._count, self._bytes,
                                                                       self.max_bytes, self.max_messages))

    def _check_open(self):
        if self._closed is not None:
            raise self._closed

    # ------------------------------------------------------------------ a link's side

    def take(self, link):
        """What ``link`` writes next, if it carries this queue: resend, control, then data, as a list of
        byte strings; they move to inflight in that order."""
        with self._lock:
            if link is not self.carrier or self._closed is not None:
                return []
            inflight = self._inflight
            data = self._data
            self._unsent = 0
            if not self._resend and not self._control:  # the common case: data alone
                if len(data) == 1:
                    item = data.popleft()
                    inflight.append(item)
                    return [item[0]]
                inflight.extend(data)
                out = [item[0] for item in data]
                data.clear()
                return out
            out = []
            for lane in (self._resend, self._control, data):
                if lane:
                    inflight.extend(lane)
                    out.extend([item[0] for item in lane])
                    lane.clear()
            return out

    def pending(self, link):
        with self._lock:
            return link is self.carrier and bool(self._resend or self._control or self._data)

    def acknowledge(self, link, delta):
        """The carrier's peer acknowledged ``delta`` more messages: the oldest in flight, taken off together,
        their bytes and count summed once (an ACK covers 64 at a time). Those the peer refused before this ACK
        (:meth:`refused`) fail with their refusal; the others complete."""
        refusals = None
        lock = self._lock
        lock.acquire()
        try:
            if link is not self.carrier:
                return
            inflight = self._inflight
            if delta >= len(inflight):
                acked = list(inflight)
                inflight.clear()
            else:
                popleft = inflight.popleft
                acked = [popleft() for _ in range(delta)]
            sizes = list(map(_SIZE, acked))
            self._bytes -= sum(sizes)
            self._count -= len(sizes) - sizes.count(0)  # control messages are size 0, out of the bounds
            if self._blocked:
                self._cond.notify_all()
            if self._refused:
                refusals = self._passed_refusals(acked)
        finally:
            lock.release()
        if refusals is None:
            for _, sent, _ in acked:
                # Sent._complete() written out (every streamed message passes here): done first, then the
                # waiters looked for, as there; those nobody waits for cost no call
                if sent is not None and sent.completes_on_ack and sent._error is None:
                    sent._error = _OK
                    if sent._event is not None or sent._callbacks is not None:
                        sent._woken()
            return
        for _, sent, _ in acked:
            if sent is not None and sent.completes_on_ack:
                sent._complete(refusals.get(sent.sequence))

    def _passed_refusals(self, acked):
        """Under the lock: the refusals of the messages ``acked`` (sequence -> GmaError), no longer remembered.
        A request's too (its answer is that ERROR already), so that none stays behind."""
        refused = self._refused
        out = {}
        for _, sent, _ in acked:
            if sent is not None:
                why = refused.pop(sent.sequence, None)
                if why is not None:
                    out[sent.sequence] = why
        return out

    def refused(self, link, sequence, error):
        """The carrier's peer refused the message numbered ``sequence`` with an ERROR it wrote before the ACK
        that passes the message (a PC servlet's uplink: docs/pcservlet.md): that ACK fails its Sent with
        ``error`` (a GmaError) rather than completing it. The link's reader calls this as it reads the ERROR.
        Nothing is remembered when nothing is in flight on ``link``: the ERROR came after the ACK, which
        completed the message already. At most MAX_REFUSED are remembered, the oldest forgotten first."""
        with self._lock:
            if link is not self.carrier or not self._inflight:
                return
            refused = self._refused
            refused[sequence] = error
            if len(refused) > MAX_REFUSED:
                del refused[next(iter(refused))]

    def refusals(self):
        """How many refusals are remembered, waiting for their ACK."""
        with self._lock:
            return len(self._refused)

    def attach(self, link):
        """``link`` carries the queue from now on, unless another does."""
        with self._lock:
            if self.carrier is None:
                self.carrier = link
            return self.carrier is link

    def detach(self, link):
        """``link`` closed: what it wrote and was not acknowledged goes out first on the next link."""
        with self._lock:
            if self.carrier is not link:
                return False
            self.carrier = None
            self._refused.clear()  # what it had in flight goes again on the next link, which answers afresh
            if self._inflight:
                self._inflight.extend(self._resend)
                self._resend = self._inflight
                self._inflight = collections.deque()
            return True

    def is_empty(self):
        with self._lock:
            return not (self._resend or self._control or self._data or self._inflight)

    def size(self):
        with self._lock:
            return self._count, self._bytes

    def close(self, error):
        """Fails everything queued with ``error``; later offers raise it."""
        with self._lock:
            if self._closed is None:
                self._closed = error
            items = []
            for lane in (self._resend, self._control, self._data, self._inflight):
                items.extend(x[1] for x in lane if x[1] is not None)
                lane.clear()
            self._bytes = self._count = 0
            self._refused.clear()
            self.carrier = None
            self._cond.notify_all()
        for s in items:
            s._complete(error)

    def reopen(self):
        """A closed queue takes messages again (a refused peer: a later send tries again)."""
        with self._lock:
            self._closed = None
