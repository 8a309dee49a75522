"""The bytes of a link: plaintext, or TLS through ssl.MemoryBIO.

TLS runs in memory (an ``SSLObject`` between two BIOs) so that the socket
itself stays a plain socket: one thread reads it while others write, and only
the short encrypt and decrypt steps share the TLS object, under a lock.
OpenSSL does not allow one SSL object to be used by two threads at once,
which a reader blocked in ``SSLSocket.recv`` while a sender writes would do.
"""

import socket
import ssl
import threading
import time

from ._errors import ErrorCode, GmaError

READ_BYTES = 256 * 1024
#: One read into a buffer of the link's own: no allocation of READ_BYTES a read (past malloc's mmap threshold,
#: CPython's recv(n) maps and unmaps n bytes each call).
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


class Plain:
    """A plaintext stream."""

    tls = False

    def __init__(self, sock):
        self.sock = sock
        self._buffer = None
        self._view = None

    def buffers(self):
        """The link's read buffer and a memoryview of it, made on first need (a plaintext socket only)."""
        if self._buffer is None:
            self._buffer = bytearray(READ_BYTES)
            self._view = memoryview(self._buffer)
        return self._buffer, self._view

    def recv(self):
        """What was read, as a memoryview of the link's buffer valid until the next read (b'' at the end of
        the stream; None when nothing came within the socket's SO_RCVTIMEO, which a link sets). One thread
        reads at a time (the link's read role)."""
        if self._buffer is None:
            self.buffers()
        try:
            n = self.sock.recv_into(self._buffer)
        except (BlockingIOError, InterruptedError):
            return None
        return self._view[:n] if n else b""

    def encode(self, plaintext):
        return plaintext

    def output(self):
        return b""

    def peer_identity(self):
        return None


class Tls(Plain):
    """TLS over a plain socket; the handshake is driven here, synchronously, with a deadline."""

    tls = True

    def __init__(self, sock, context, server_side, server_hostname=None):
        super().__init__(sock)
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        self._obj = context.wrap_bio(self._in, self._out, server_side=server_side,
                                     server_hostname=server_hostname)
        self._lock = threading.Lock()
        self._early = b""
        self._ended = False  # the peer's close_notify came: nothing more to read

    def handshake(self, deadline):
        """Runs the TLS handshake until it is over or ``deadline`` (time.monotonic()) passes."""
        while True:
            try:
                self._obj.do_handshake()
                self._send_out(deadline)
                # what came with the handshake's last bytes (the peer's HELLO, say) is read from the socket
                # already: kept here for the first recv, which would otherwise wait for bytes that came
                self._early = self._decrypt_buffered()
                return
            except ssl.SSLWantReadError:
                self._send_out(deadline)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GmaError(ErrorCode.TIMEOUT, "no TLS handshake within 5 s")
                self.sock.settimeout(left)
                try:
                    raw = self.sock.recv(READ_BYTES)
                except socket.timeout:
                    raise GmaError(ErrorCode.TIMEOUT, "no TLS handshake within 5 s") from None
                if not raw:
                    raise ConnectionError("the peer closed the connection in the TLS handshake")
                if raw[:2] == b"GM" and not self._obj.server_side:
                    raise GmaError(ErrorCode.UNAUTHORIZED, "the peer answered in plaintext GMA: it does not"
                                   " speak TLS (is security on at both ends?)")
                if raw[:2] == b"GM" and self._obj.server_side:
                    raise PlaintextPeer()
                self._in.write(raw)

    def _send_out(self, deadline):
        data = self._out.read()
        if data:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            self.sock.sendall(data)

    def _decrypt_buffered(self):
        with self._lock:
            chunks, self._ended = self._decrypt_all()
        return b"".join(chunks)

    def _decrypt_all(self):
        """Under the lock: all the TLS engine can decrypt now, and whether the peer closed TLS. Its
        close_notify is SSLZeroReturnError, or b'' from read again and again (CPython's answer while only the
        peer has shut down): either ends the stream, rather than read forever."""
        chunks = []
        try:
            while True:
                piece = self._obj.read(READ_BYTES)
                if not piece:
                    return chunks, True
                chunks.append(piece)
        except ssl.SSLWantReadError:
            return chunks, False
        except ssl.SSLZeroReturnError:
            return chunks, True

    def recv(self):
        """Decrypted bytes; b'' at the end of the stream (the connection's, or TLS's close_notify). Output the
        TLS engine makes meanwhile (a KeyUpdate answer) waits in the out BIO for the next write, which
        :meth:`output` takes. Every read takes all the TLS engine can decrypt, so nothing waits inside it while
        the socket has nothing more to say."""
        if self._early:
            data, self._early = self._early, b""
            return data
        while not self._ended:
            raw = self.sock.recv(READ_BYTES)
            if not raw:
                return b""
            with self._lock:
                self._in.write(raw)
                chunks, self._ended = self._decrypt_all()
            if chunks:
                return b"".join(chunks)
        return b""

    def encode(self, plaintext):
        with self._lock:
            if plaintext:
                self._obj.write(plaintext)
            return self._out.read()

    def output(self):
        with self._lock:
            return self._out.read()

    def has_output(self):
        return self._out.pending > 0

    def peer_identity(self):
        cert = self._obj.getpeercert()
        if not cert:
            return None
        for rdn in cert.get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return None


class PlaintextPeer(Exception):
    """Plaintext GMA arrived where a TLS record was due."""
