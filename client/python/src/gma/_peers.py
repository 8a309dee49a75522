"""An endpoint's view of one destination (or of the uplink): its send queue, its links, its connection
attempts and their back-off; and a request awaiting its answer."""

import random
import threading
import time
from _thread import allocate_lock as _allocate_lock

from ._queue import SendQueue


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
    that a REQUEST that fails on its way (a refused link, a closing endpoint) fails the request at once."""

    __slots__ = ("core", "to", "deadline", "timeout", "latch", "done", "reply", "error", "sequence")

    def __init__(self, core, to, timeout, sequence):
        self.core = core
        self.to = to
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.sequence = sequence
        self.latch = _allocate_lock()
        self.latch.acquire()  # released when answered: a waiter blocks on it
        self.done = False
        self.reply = None
        self.error = None

    def finish(self, reply=None, error=None):
        """Answers the request once; false when it was answered already."""
        if self.done:
            return False
        self.reply, self.error, self.done = reply, error, True
        self.latch.release()
        return True

    def _complete(self, error=None):
        if error is not None:
            self.core._fail_request(self.sequence, error)
