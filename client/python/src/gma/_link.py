"""One TCP connection with a peer (protocol.md section 4).

::

    senders --flush--> [immediate: ACK PING PONG BYE] + queue.take() --> transport --> socket
    a request --write_taken--> queue's in flight + socket (nothing else pending)
    socket --> reader thread --> StreamDecoder --> ACK, PING, PONG, BYE: the link's own
                                              --> the rest: the listener, counted for our ACKs
    socket --> a caller in await_reply --> its REPLY at the start of a read: taken as is (_took)
                                      --> the rest: as the reader thread would

The handshake (TLS, then HELLO and WELCOME) runs synchronously in the thread
that connected or accepted, within 5 s (``_handshake``). After it, one reader thread per link
reads and runs the listener (the endpoint's handlers run there, as on Java's
event loop), except while a caller waiting for a reply reads in its place (the
read role, ``_rlock``). Writing: any thread that finds the write lock free writes what is
pending without waiting (MSG_DONTWAIT); what the socket does not take now is
left to the link's writer thread, started on first need, which may block.
The endpoint's ticker thread calls :meth:`Link.tick` every 10 ms: the ACK due
by time (20 ms), PING after a ping interval idle, death after three silent.
"""

import select
import socket
import struct
import sys
import threading
import time

from . import _wire
from ._errors import ErrorCode, GmaError, ProtocolError
from ._transport import _DONTWAIT
from ._wire import Command

HANDSHAKE_SECONDS = 5.0
ACK_EVERY_MESSAGES = 64
ACK_EVERY_BYTES = 256 * 1024
ACK_WITHIN = 0.020
BYE_DRAIN = 0.2
# a link that brought messages, and had nothing acknowledged, worked once it lasted this long after the first
WORKED_AFTER = 1.0
_ACK_DATA = struct.Struct(">Q")
_SEQ_LENGTH = struct.Struct(">QI")  # a header's bytes 8..20: sequence, dataLength
_monotonic = time.monotonic
#: How long a caller's read of a plaintext link waits at most (SO_RCVTIMEO) before it looks at its deadline
#: again: a blocking recv is one system call where poll and recv are two.
RECV_WAIT = 0.05
_RECV_WAIT = struct.pack("ll", 0, int(RECV_WAIT * 1e6)) if sys.platform.startswith("linux") else None


_READING = threading.local()
_READING.on = False


def reading():
    """Whether this thread is reading a link now (handling what it read): it must not wait for a reply or
    for room in a queue, which only its own reading would bring."""
    return getattr(_READING, "on", False)


class Link:
    """An open link. ``peer_name`` is who the peer said it is (WELCOME's or HELLO's from), ``identity`` who it
    proved to be (accepted links, with security on)."""

    def __init__(self, transport, outbound, name, peer_name, listener, decoder, ping_interval, identity=None):
        self.transport = transport
        self.sock = transport.sock
        self.tls = transport.tls
        self.outbound = outbound
        # an accepted link counted against its endpoint's max_links (given back when it closes)
        self.counted = False
        self.name = name
        self.peer_name = peer_name
        self.identity = identity
        self.listener = listener
        self.peer = None  # the endpoint's Peer this link carries, once known
        self.seen = None  # the listener's dedup record of the last sender on this link
        self.queue = None
        self._decoder = decoder
        self._ping = ping_interval
        self._immediate = []
        self._imm_lock = threading.Lock()
        self._wlock = threading.Lock()
        self._want_flush = False
        self._leftover = b""
        self._writer = None
        self._writer_idle = True
        self._writer_wake = threading.Event()
        self._closed = False
        self._close_lock = threading.Lock()
        self.failure = None
        now = time.monotonic()
        self.last_read = now
        self._handling = False  # a read's messages are being handled: not the peer's silence
        self.last_write = now
        # what we received and acknowledged; what the peer acknowledged of ours
        self._received = 0
        self._received_bytes = 0
        self._acked = 0
        self._acked_bytes = 0
        self._unacked_since = None
        self._ack_lock = threading.Lock()
        self._peer_acked = 0
        self._acked_by_peer = False
        self._first_message_at = None
        self._reader = None
        # the read role: the reader thread's, or a caller's that waits for a reply (await_reply)
        self._rlock = threading.Lock()
        self._rcond = threading.Condition()
        self._waiters = []  # one item per caller in await_reply (list append and pop: atomic, no lock)
        self._waited_until = 0.0
        self._blocking_reads = False  # plaintext with SO_RCVTIMEO: a caller waits in recv itself (start)
        self._rbuf = self._rview = None
        if not self.tls:
            self._rbuf, self._rview = transport.buffers()
        self._wake_r, self._wake_w = socket.socketpair()
        self._poll = select.poll()
        self._poll.register(self.sock, select.POLLIN)

    # ------------------------------------------------------------------ starting

    def start(self, pending=()):
        """Starts the reader thread; ``pending`` are messages read with the handshake's last bytes."""
        self.sock.settimeout(None)
        if not self.tls and _RECV_WAIT is not None:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _RECV_WAIT)
                self._blocking_reads = True
            except OSError:
                pass
        self._reader = threading.Thread(target=self._read_loop, args=(list(pending),),
                                        name="gma-link-%s" % (self.peer_name or "?"), daemon=True)
        self._reader.start()

    def is_reader(self):
        return threading.current_thread() is self._reader

    @property
    def closed(self):
        return self._closed

    def describe(self):
        try:
            host, port = self.sock.getpeername()[:2]
            where = "%s:%d" % (host, port)
        except OSError:
            where = "a closed connection"
        return "%s at %s" % (self.peer_name, where) if self.peer_name else where

    # ------------------------------------------------------------------ writing

    def send_immediate(self, packed):
        """Queues a link-level message (ACK, PING, PONG, BYE, an ERROR before closing): not counted, not
        acknowledged, written before what the send queue holds."""
        with self._imm_lock:
            self._immediate.append(packed)
        self.flush()

    def flush(self):
        """Writes what is pending, from any thread, without waiting for the socket."""
        while True:
            self._want_flush = True  # before trying the lock: its holder looks again after releasing it
            if not self._wlock.acquire(False):
                return
            try:
                self._want_flush = False
                if self._closed:
                    return
                self._write_some(False)
            except OSError as e:
                self._wlock.release()
                self.fail(GmaError(ErrorCode.INTERNAL, "link to %s failed: %s" % (self.peer_name, e)))
                return
            self._wlock.release()
            if not self._want_flush:
                return

    def write_taken(self, packed, sent, queue, now):
        """Writes a data message at once on this thread when nothing else waits to be written (a request, the
        common case): it goes straight to the queue's in-flight lane (``SendQueue.offer_taken``) and to the
        socket, in one system call, without the data lane and flush's gathering. False, having done nothing,
        when that cannot be (the write lock is busy, something is pending, the queue is not this link's or has
        no room): the caller then queues it as any other. True once it is in flight, even when the write
        failed (the link then ends, and the next link resends it)."""
        wlock = self._wlock
        if not wlock.acquire(False):
            return False
        taken = False
        try:
            if not (self._leftover or self._immediate or self._closed) and queue.offer_taken(self, packed, sent):
                taken = True
                data = self.transport.encode(packed) if self.tls else packed
                try:
                    n = self.sock.send(data, _DONTWAIT) if _DONTWAIT else 0
                except (BlockingIOError, InterruptedError):
                    n = 0
                if n:
                    self.last_write = now
                if n < len(data):
                    self._leftover = data[n:] if n else data
                    self._wake_writer()
        except OSError as e:
            wlock.release()
            self.fail(GmaError(ErrorCode.INTERNAL, "link to %s failed: %s" % (self.peer_name, e)))
            return taken
        wlock.release()
        if self._want_flush:  # another thread's flush found the lock taken: its holder looks again
            self.flush()
        return taken

    def _gather(self):
        if self._immediate:
            with self._imm_lock:
                parts, self._immediate = self._immediate, []
            q = self.queue
            if q is not None:
                parts.extend(q.take(self))
        else:
            q = self.queue
            parts = q.take(self) if q is not None else ()
        if not parts:
            return self.transport.output() if self.tls else b""
        data = b"".join(parts) if len(parts) > 1 else parts[0]
        return self.transport.encode(data) if self.tls else data

    def _write_some(self, blocking):
        """Under the write lock: writes the leftover and what is pending. Not blocking: what the socket does
        not take now stays as the leftover, for the writer thread."""
        data = self._leftover + self._gather() if self._leftover else self._gather()
        self._leftover = b""
        while data:
            if blocking:
                self._leftover = data  # until it is written: a failure leaves it for nobody, the link ends
                self.sock.sendall(data)
                self._leftover = b""
                self.last_write = time.monotonic()
                data = self._gather()
                continue
            try:
                n = self.sock.send(data, _DONTWAIT) if _DONTWAIT else 0
            except (BlockingIOError, InterruptedError):
                n = 0
            if n:
                self.last_write = time.monotonic()
            if n < len(data):
                self._leftover = data[n:] if n else data
                self._wake_writer()
                return
            data = b""

    def kick(self):
        """Has the writer thread write what is pending, so that a sender streaming data goes on without a
        system call of its own (and without giving up the GIL for one): the writer writes what queued meanwhile
        in one go."""
        if self._writer_idle and not self._closed:
            self._writer_idle = False
            self._wake_writer()

    def _wake_writer(self):
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="gma-writer-%s" % self.peer_name,
                                            daemon=True)
            self._writer.start()
        self._writer_wake.set()

    def _pending_output(self):
        q = self.queue
        return bool(self._leftover or self._immediate or (q is not None and q.pending(self)))

    def _write_loop(self):
        wake = self._writer_wake
        while not self._closed:
            self._writer_idle = True
            if not self._pending_output():  # checked after saying idle: a kick before it is seen here
                wake.wait()
            wake.clear()
            self._writer_idle = False
            if self._closed:
                return
            with self._wlock:
                try:
                    if not self._closed:
                        self._write_some(True)
                except OSError as e:
                    self.fail(GmaError(ErrorCode.INTERNAL, "link to %s failed: %s" % (self.peer_name, e)))
                    return
            if self._want_flush:
                self.flush()

    # ------------------------------------------------------------------ reading

    def _read_loop(self, pending):
        """The reader thread: it reads whenever no caller waiting for a reply reads in its place."""
        _READING.on = True
        try:
            for m in pending:
                self._on_message(m)
        except Exception as e:
            self._read_failed(e)
            return
        finally:
            _READING.on = False
        rlock, cond, sock, wake = self._rlock, self._rcond, self.sock, self._wake_r
        while not self._closed:
            if self._waiters or time.monotonic() - self._waited_until < 0.002:
                # a caller reads (await_reply), or did a moment ago and is likely to again: let it, without
                # being woken by each reply it reads (it reads whatever comes meanwhile, as this thread would)
                with cond:
                    cond.wait(0.002)
                continue
            try:
                ready = select.select((sock, wake), (), (), 1.0)[0]
            except (OSError, ValueError):
                if not self._closed:
                    self._read_failed(OSError("select failed"))
                return
            if wake in ready:
                try:
                    wake.recv(4096)
                except OSError:
                    pass
            if sock in ready and rlock.acquire(False):
                try:
                    if not self.read_once():
                        return
                finally:
                    rlock.release()

    def read_once(self, chunk=None):
        """Reads what the socket has (it is readable; or handles ``chunk``, read already) on this thread:
        whether the link goes on. The caller holds the read role (``_rlock``)."""
        _READING.on = True
        try:
            if chunk is None:
                chunk = self.transport.recv()
                if chunk is None:  # nothing within SO_RCVTIMEO (another thread read what select saw)
                    return not self._closed
            if not chunk:
                if not self._closed:
                    self._close(GmaError(ErrorCode.INTERNAL, "%s closed the connection" % self.describe()), False)
                return False
            # the peer's silence counts from when what it sent was handled: a long handler is not its silence
            self._handling = True
            try:
                self._decoder.feed_each(chunk, self._on_message)
            finally:
                self.last_read = time.monotonic()
                self._handling = False
            if self._received - self._acked >= ACK_EVERY_MESSAGES or (
                    self._received_bytes - self._acked_bytes >= ACK_EVERY_BYTES):
                self.send_ack()
            if self.transport.tls and self.transport.has_output():
                self.flush()
            return not self._closed
        except Exception as e:
            self._read_failed(e)
            return False
        finally:
            _READING.on = False

    def await_reply(self, aw, expect=None):
        """Reads this link on the calling thread until ``aw.done`` is true or ``aw.deadline`` passes: a caller
        that waits for a reply reads it itself rather than being handed it by the reader thread, which saves
        two thread switches a round trip. Whatever else arrives meanwhile is handled here as the reader thread
        would have (handlers included). Returns when done, at the deadline, or if the link closes.

        ``expect`` describes the REPLY that answers ``aw`` (its first 8 header bytes, the two names, where
        its data starts), or is None: such a reply at the start of a read, the common case, is taken without
        the decoder (:meth:`_took`). On a plaintext link the caller waits in ``recv`` itself (one system call;
        SO_RCVTIMEO bounds it to RECV_WAIT, after which the deadline is looked at again)."""
        rlock = self._rlock
        waiters = self._waiters
        blocking = self._blocking_reads
        waiters.append(None)
        now = 0.0
        left = aw.deadline - _monotonic()
        try:
            while not aw.done and not self._closed:
                if left <= 0:
                    return
                if not rlock.acquire(False) and not rlock.acquire(True, min(left, RECV_WAIT)):
                    now = _monotonic()
                    left = aw.deadline - now
                    continue
                try:
                    if aw.done or self._closed:
                        return
                    if blocking and left >= RECV_WAIT:
                        try:
                            n = self.sock.recv_into(self._rbuf)
                        except (BlockingIOError, InterruptedError, socket.timeout):
                            n = -1  # nothing within RECV_WAIT
                        except OSError as e:
                            self._read_failed(e)
                            return
                        now = _monotonic()
                        if n >= 0 and not self._took(aw, expect, n, now):
                            return
                    else:
                        try:
                            ready = self._poll.poll(min(left, RECV_WAIT) * 1000)
                        except (OSError, ValueError):
                            return
                        if ready and not self.read_once():
                            return
                        now = _monotonic()
                    left = aw.deadline - now
                finally:
                    rlock.release()
        finally:
            waiters.pop()
            self._waited_until = now or _monotonic()

    def _took(self, aw, expect, n, now):
        """``n`` bytes were read into the link's buffer by a caller awaiting ``aw``: whether the link goes on.
        When the read begins with the REPLY that ``expect`` describes, after no partial message, that reply
        is taken here, counted for our ACK as the decoder's path counts it, and handed to ``aw.answered``
        (the endpoint's request table); what follows it, or a read that does not begin so, goes the reader
        thread's way (read_once)."""
        view = self._rview
        if expect is not None and n >= 20:
            head, names, start = expect
            buf = self._rbuf
            decoder = self._decoder
            if buf.startswith(head) and buf.startswith(names, 20) and not decoder._buf:
                seq, d = _SEQ_LENGTH.unpack_from(buf, 8)
                end = start + d
                if seq == aw.sequence and end <= n and d <= decoder._limit and not self._closed:
                    self._received += 1
                    self._received_bytes += 20 + d
                    if self._unacked_since is None:
                        self._unacked_since = now
                    self.last_read = now
                    aw.answered(bytes(view[start:end]))
                    if end < n:
                        return self.read_once(view[end:n])
                    if self._received - self._acked >= ACK_EVERY_MESSAGES or (
                            self._received_bytes - self._acked_bytes >= ACK_EVERY_BYTES):
                        self.send_ack()
                    return not self._closed
        return self.read_once(view[:n] if n else b"")

    def _read_failed(self, e):
        if isinstance(e, ProtocolError):
            # the stream cannot be trusted: tell the peer why, then close (protocol.md section 1)
            if not self._closed:
                self.listener.log_warning("%s: closing link to %s: %s" % (self.name, self.describe(), e))
                self.send_immediate(_wire.pack(0, Command.ERROR, self.name, self.peer_name or "", e.error_text()))
                self._close(e, linger=True)
        elif isinstance(e, _Bye):
            self._close(GmaError(ErrorCode.SHUTTING_DOWN, "%s said BYE" % self.peer_name), linger=False)
        elif isinstance(e, OSError):
            if not self._closed:
                self._close(GmaError(ErrorCode.INTERNAL, "link to %s failed: %s" % (self.peer_name, e)), False)
        else:  # a bug here must not leave the peer without its link's end
            error = GmaError(ErrorCode.INTERNAL, "link to %s failed: %r" % (self.peer_name, e))
            self.listener.log_warning(error.sentence)
            self._close(error, linger=False)

    @property
    def worked(self):
        """Whether the link worked, whatever ended it: the peer acknowledged something, or it sent messages and the
        link lasted WORKED_AFTER after the first. A peer whose links fail at once after a few messages (one this
        side refuses, sent again after each reconnect) is not reconnected to at once, again and again."""
        first = self._first_message_at
        return self._acked_by_peer or (first is not None and time.monotonic() - first >= WORKED_AFTER)

    def _on_message(self, m):
        c = m.command
        if self._closed:
            return
        if c < 0x10 or c >= 0x40:  # what the listener takes, counted: the common case first
            # a peer that only sends here (a PC servlet to a consumer) never ACKs: its messages say the link works,
            # once it lasted (worked)
            if self._first_message_at is None:
                self._first_message_at = time.monotonic()
            self.listener.receive(self, m)
            self._received += 1
            self._received_bytes += 20 + len(m.data)
            if self._unacked_since is None:
                self._unacked_since = time.monotonic()
        elif c == Command.ACK:
            count = _ACK_DATA.unpack(m.data)[0]
            delta = count - self._peer_acked
            if delta > 0:
                self._peer_acked = count
                self._acked_by_peer = True
                q = self.queue
                if q is not None:
                    q.acknowledge(self, delta)
        elif c == Command.PING:
            self.send_ack()  # what came before it first: a PC servlet with a spool asks for it with a PING
            self.send_immediate(_wire.pack(m.sequence, Command.PONG, self.name, m.sender, m.data))
        elif c == Command.PONG:
            pass
        elif c == Command.BYE:
            self.send_ack()
            self.listener.said_bye(self)
            raise _Bye()
        else:  # HELLO, WELCOME
            raise ProtocolError(ErrorCode.MALFORMED, Command.name(c) + " after the handshake")

    # ------------------------------------------------------------------ acknowledging, keepalive

    def send_ack(self):
        """Acknowledges what was received and not acknowledged yet, if anything."""
        with self._ack_lock:
            count = self._received
            if count == self._acked or self._closed:
                return
            self._acked = count
            self._acked_bytes = self._received_bytes
            self._unacked_since = None
            if self._received != count:
                # the reader counted one more after the count was read, and found the timer set (not to set it
                # again): it is set here, or that message would wait for the next one, or a PING, for its ACK
                self._unacked_since = time.monotonic()
        self.send_immediate(_wire.pack(0, Command.ACK, self.name, self.peer_name or "", _ACK_DATA.pack(count)))

    def tick(self, now):
        """The endpoint's ticker, every 10 ms: the ACK due by time, a PING when idle, a dead peer."""
        if self._closed:
            return
        since = self._unacked_since
        if since is not None and now - since >= ACK_WITHIN:
            self.send_ack()
        if not self._handling and now - self.last_read > 3 * self._ping:
            self.fail(GmaError(ErrorCode.TIMEOUT, "%s was silent for 3 ping intervals (%d ms)"
                               % (self.peer_name, 3000 * self._ping)))
            return
        if now - max(self.last_read, self.last_write) >= self._ping:
            self.last_write = now
            self.send_immediate(_wire.pack(0, Command.PING, self.name, self.peer_name or "", b""))

    # ------------------------------------------------------------------ closing

    def fail(self, error):
        """Ends the link at once, as a network failure would (no BYE); the listener hears of it once."""
        self._close(error, linger=False)

    def bye(self):
        """Acknowledges what arrived, says BYE, waits a little for it to be written, and closes."""
        if self._closed:
            return
        self.send_ack()
        self.send_immediate(_wire.pack(0, Command.BYE, self.name, self.peer_name or "", b""))
        self._close(GmaError(ErrorCode.SHUTTING_DOWN, "%s is closing" % self.name), linger=True)

    def close_without_bye(self):
        self.send_ack()
        self._close(GmaError(ErrorCode.SHUTTING_DOWN, "%s is closing" % self.name), linger=True)

    def _close(self, error, linger):
        with self._close_lock:
            if self._closed:
                return
            if linger:
                self._drain()
            self._closed = True
        self.failure = error
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._writer_wake.set()
        for s in (self._wake_w, self._wake_r):
            try:
                s.close()
            except OSError:
                pass
        with self._rcond:
            self._rcond.notify_all()
        self.listener.link_closed(self, error)

    def _drain(self):
        """Writes what is pending (within BYE_DRAIN), then half-closes and reads until the peer closes, so that
        an ERROR or BYE is read before the socket closes (closing on unread input resets the connection)."""
        deadline = time.monotonic() + BYE_DRAIN
        if self._wlock.acquire(timeout=BYE_DRAIN):
            try:
                self.sock.settimeout(BYE_DRAIN)
                data, self._leftover = self._leftover, b""
                with self._imm_lock:
                    parts, self._immediate = self._immediate, []
                data += self.transport.encode(b"".join(parts)) if parts else self.transport.output()
                if data:
                    self.sock.sendall(data)
            except OSError:
                pass
            finally:
                self._wlock.release()
        try:
            self.sock.shutdown(socket.SHUT_WR)
            if not self.is_reader():
                return  # the reader thread is reading already: the close ends it
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.sock.settimeout(left)
                if not self.sock.recv(65536):
                    return
        except OSError:
            return


class _Bye(Exception):
    pass
