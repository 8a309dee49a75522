"""What an endpoint hands its application and remembers of what it received: :class:`Incoming`, the
message given to ``on_message``; and the deduplication of (from, sequence) (protocol.md section 4): per
sender the last 65,536 numbers delivered, senders in an LRU of 4,096, a sender forgotten at its BYE."""

import collections
import threading

from . import _wire
from ._wire import Command

REMEMBERED = 65536
MAX_SENDERS = 4096


class Incoming:
    """A message delivered to ``on_message``: ``sender``, ``to``, ``command``, ``sequence``, ``data`` (bytes),
    ``reply_expected`` (a REQUEST), and :meth:`reply` to answer it."""

    __slots__ = ("_core", "_m")

    def __init__(self, core, m):
        self._core = core
        self._m = m

    sender = property(lambda self: self._m.sender)
    to = property(lambda self: self._m.to)
    command = property(lambda self: self._m.command)
    sequence = property(lambda self: self._m.sequence)
    data = property(lambda self: self._m.data)

    @property
    def reply_expected(self):
        """True for a REQUEST: its sender awaits a REPLY (:meth:`reply`) or an ERROR."""
        m = self._m
        return m.command == Command.REQUEST and bool(m.flags & _wire.REPLY_EXPECTED)

    def text(self):
        return self._m.data.decode("utf-8", "replace")

    def reply(self, data):
        """Sends a REPLY with this message's sequence (a control message: never behind data)."""
        m = self._m
        self._core.send_control(m.sender, Command.REPLY, m.sequence, bytes(data))

    def __repr__(self):
        m = self._m
        return "Incoming(%s from %s #%d, %d bytes)" % (Command.name(m.command), m.sender, m.sequence, len(m.data))


class _Seen:
    """One sender's delivered sequence numbers, the last REMEMBERED of them."""

    __slots__ = ("sender", "numbers", "order", "lock", "forgotten")

    def __init__(self, sender):
        self.sender = sender
        self.numbers = set()
        self.order = collections.deque()
        self.lock = threading.Lock()
        self.forgotten = False

    def add(self, seq):
        if seq == 0:
            return True
        if seq in self.numbers:
            return False
        self.numbers.add(seq)
        self.order.append(seq)
        if len(self.order) > REMEMBERED:
            self.numbers.discard(self.order.popleft())
        return True


class _Dedup:
    """Per sender, the numbers delivered; senders in an LRU of MAX_SENDERS; a sender that says BYE is
    forgotten."""

    def __init__(self):
        self._senders = collections.OrderedDict()
        self._lock = threading.Lock()

    def of(self, sender):
        with self._lock:
            s = self._senders.get(sender)
            if s is None:
                s = self._senders[sender] = _Seen(sender)
                if len(self._senders) > MAX_SENDERS:
                    self._senders.popitem(last=False)[1].forgotten = True
            else:
                self._senders.move_to_end(sender)
            return s

    def forget(self, sender):
        with self._lock:
            s = self._senders.pop(sender, None)
            if s is not None:
                s.forgotten = True

    def remembers(self, sender):
        with self._lock:
            return sender in self._senders
