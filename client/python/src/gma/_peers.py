"""An endpoint's view of one destination (or of the uplink): its send queue, its links, its connection
attempts and their back-off; and a request awaiting its answer."""

import random
import threading
from _thread import allocate_lock as _allocate_lock

from ._queue import SendQueue


MAX_NAMES_KEPT = 4096  # destinations whose encoded names (and forms) a peer keeps at most


class _Peer:
    """A destination (or the uplink): its send queue, its links, its connection attempts and back-off."""

    def __init__(self, name, max_bytes, max_messages):
        self.name = name
        self.queue = SendQueue(name, max_bytes, max_messages)
        self.links = []
        self.lock = threading.Lock()
        self.connecting = False
        self.failures = 0
        self.forgotten = False
        self.to_bytes = {}
        self.forms = {}  # a destination's name -> (command, header's first 8 bytes, both names): EndpointCore.send
        self.replies = {}  # a destination's name -> the REPLY it answers with, as Link.await_reply's expect

    def remember_name(self, to, encoded):
        """Keeps ``to``'s encoded name; the uplink carries messages to any number of names in other domains, so
        past MAX_NAMES_KEPT the encodings (and the forms made of them) are dropped and made again as needed."""
        if len(self.to_bytes) >= MAX_NAMES_KEPT:
            self.to_bytes.clear()
            self.forms.clear()
            self.replies.clear()
        self.to_bytes[to] = encoded

    def active(self):
        return self.queue.carrier

    def backoff(self, worked):
        """Milliseconds before the next attempt: 0 after a link that worked, else 50 ms doubling to 5 s, with
        jitter (half to all of it), as Java's Backoff."""
        if worked:
            self.failures = 0
            return 0
        self.failures = min(self.failures + 1, 16)
        ceiling = min(5000, 50 << min(self.failures, 10))
        return ceiling // 2 + random.randint(0, ceiling // 2)


class _Awaited:
    """A request awaiting its answer; also what its send queue tells of the REQUEST's fate (``_complete``), so
    that a REQUEST that fails on its way (a refused link, a closing endpoint) fails the request at once.

    It is answered once, by whoever took it out of the endpoint's request table (``finish``, ``answered``).
    A thread that must block for it (:meth:`wait`) makes its latch then: most requests are answered on the
    very thread that waits (``Link.await_reply``) and need none."""

    __slots__ = ("core", "to", "deadline", "timeout", "latch", "done", "reply", "error", "sequence")
    completes_on_ack = False  # the queue's ACK of the REQUEST says nothing of its answer: no _complete then

    def __init__(self, core, to, timeout, sequence, deadline):
        self.core = core
        self.to = to
        self.timeout = timeout
        self.deadline = deadline
        self.sequence = sequence
        self.latch = None
        self.done = False
        self.reply = None
        self.error = None

    def finish(self, reply=None, error=None):
        """Answers the request once; false when it was answered already."""
        if self.done:
            return False
        self.reply, self.error = reply, error
        self._release()
        return True

    def answered(self, data):
        """Its REPLY was read and checked by the link (``Link._took``): the endpoint's ``_answer`` for it."""
        core = self.core
        counters = core.counters
        counters.received += 1
        if core._requests.pop(self.sequence, None) is None:
            counters.duplicates += 1  # answered already (it timed out): a reply to no request, as _answer counts
            return
        self.reply = data
        self.done = True  # as _release, inline: this is every round trip's
        latch = self.latch
        if latch is not None:
            latch.release()

    def _release(self):
        # done before the latch is read, and the latch set before done is read (wait): one of the two sees
        # the other, so a waiter never blocks on an answered request
        self.done = True
        latch = self.latch
        if latch is not None:
            latch.release()

    def wait(self, timeout):
        """Blocks until answered, ``timeout`` seconds at most: whether it was answered."""
        if self.done:
            return True
        latch = _allocate_lock()
        latch.acquire()
        self.latch = latch
        return self.done or latch.acquire(timeout=timeout)

    def _complete(self, error=None):
        if error is not None:
            self.core._fail_request(self.sequence, error)
