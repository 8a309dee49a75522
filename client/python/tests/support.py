"""Test tools: a raw peer that speaks GMA by hand (and misbehaves at a named step), and a TCP proxy whose
connections a test can cut."""

import socket
import struct
import threading
import time

from gma import _wire
from gma._wire import Command


class RawPeer:
    """A socket speaking GMA message by message, as a test scripts it."""

    def __init__(self, sock):
        self.sock = sock
        self.decoder = _wire.StreamDecoder()
        self.got = []

    @classmethod
    def connect(cls, port, host="127.0.0.1"):
        return cls(socket.create_connection((host, port), timeout=5))

    def send(self, command, sender, to, seq=0, data=b"", flags=None):
        self.sock.sendall(_wire.pack(seq, command, sender, to, data, flags))

    def send_raw(self, b):
        self.sock.sendall(b)

    def hello(self, name, to_name=None):
        self.send(Command.HELLO, name, "")
        m = self.next()
        assert m.command == Command.WELCOME, m
        if to_name is not None:
            assert m.sender == to_name
        return m

    def next(self, timeout=5.0, skip=(Command.PING, Command.ACK)):
        """The next message, skipping ``skip``; AssertionError when none comes or the connection closes."""
        deadline = time.monotonic() + timeout
        while True:
            while self.got:
                m = self.got.pop(0)
                if m.command not in skip:
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no message within %s s" % timeout)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise EOFError("the connection closed")
            self.got.extend(self.decoder.feed(chunk))

    def closed_within(self, timeout=2.0):
        """Whether the peer closes the connection within ``timeout`` (what it sends meanwhile is kept)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return True
            if not chunk:
                return True
            self.got.extend(self.decoder.feed(chunk))
        return False

    def close(self):
        self.sock.close()


class RawServer:
    """A listening socket whose accepted connections become RawPeers, in ``peers``."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.peers = []
        self._cond = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                s, _ = self.server.accept()
            except OSError:
                return
            with self._cond:
                self.peers.append(RawPeer(s))
                self._cond.notify_all()

    def accepted(self, n=1, timeout=5.0):
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.peers) >= n, timeout):
                raise AssertionError("no connection within %s s" % timeout)
            return self.peers[n - 1]

    def close(self):
        self.server.close()
        for p in self.peers:
            p.close()


class Proxy:
    """Forwards TCP connections to ``target``; :meth:`cut` closes every connection open now, as a network
    failure would."""

    def __init__(self, target):
        self.target = target
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.address = ("127.0.0.1", self.port)
        self._pairs = []
        self._lock = threading.Lock()
        self.cuts = 0
        self.connections = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                a, _ = self.server.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(self.target, timeout=5)
            except OSError:
                a.close()
                continue
            b.settimeout(None)
            for s in (a, b):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._pairs.append((a, b))
                self.connections += 1
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()
            threading.Thread(target=self._pump, args=(b, a), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                d = src.recv(65536)
                if not d:
                    break
                dst.sendall(d)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        """Cuts every connection open now: both ends see the connection end mid-stream (a shutdown wakes the
        threads reading them, then SO_LINGER 0 resets what is left)."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
            self.cuts += 1
        for pair in pairs:
            for s in pair:
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                try:
                    s.close()
                except OSError:
                    pass

    def close(self):
        self.server.close()
        self.cut()
