"""The start of a link (protocol.md section 4, docs/protocol-choices.md "Security on streams"): TCP, TLS
when security is on, then HELLO and WELCOME, all within 5 s, synchronously on the thread that connects or
accepts. Until it is over a peer has proved nothing: its data is bounded to 4,096 bytes (the decoder's
handshake limit). A refusal is an ERROR with its code, after which the connection closes."""

import socket
import time

from . import _wire
from ._errors import ErrorCode, GmaError, ProtocolError, parse_error_text
from ._link import BYE_DRAIN, HANDSHAKE_SECONDS, Link
from ._transport import Plain, PlaintextPeer, Tls
from ._wire import Command


def _first_message(transport, decoder, deadline, what):
    """Reads until the first message: (it, the messages after it in the same read)."""
    got = []

    def sink(m):
        if not got:
            decoder.end_handshake()  # what follows the first message is the open link's
        got.append(m)

    while not got:
        left = deadline - time.monotonic()
        if left <= 0:
            raise GmaError(ErrorCode.TIMEOUT, "no %s within 5 s" % what)
        transport.sock.settimeout(left)
        try:
            chunk = transport.recv()
        except socket.timeout:
            raise GmaError(ErrorCode.TIMEOUT, "no %s within 5 s" % what) from None
        if not chunk:
            raise ConnectionError("the peer closed the connection before %s" % what)
        decoder.feed_each(chunk, sink)
    return got[0], got[1:]


def connect(address, name, credential, listener, ping_interval, max_message_bytes, tls_context=None,
            server_hostname=None, expected=None):
    """Connects, runs TLS and HELLO/WELCOME, and answers the open link (not started).

    Raises GmaError: UNAUTHORIZED or FORBIDDEN (or another code) when the peer refused the link, TIMEOUT, or
    INTERNAL for a connection that failed."""
    deadline = time.monotonic() + HANDSHAKE_SECONDS
    try:
        sock = socket.create_connection(address, timeout=HANDSHAKE_SECONDS)
    except OSError as e:
        raise GmaError(ErrorCode.INTERNAL, "cannot connect to %s at %s:%s: %s"
                       % (expected or "the peer", address[0], address[1], e)) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        if tls_context is not None:
            transport = Tls(sock, tls_context, False, server_hostname or address[0])
            try:
                transport.handshake(deadline)
            except OSError as e:  # ssl.SSLError is an OSError: a certificate not trusted, an alert
                raise GmaError(ErrorCode.UNAUTHORIZED, "TLS with %s:%s failed: %s"
                               % (address[0], address[1], e)) from None
        else:
            transport = Plain(sock)
        decoder = _wire.StreamDecoder(max_message_bytes, _wire.HANDSHAKE_MAX_DATA)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(transport.encode(_wire.pack(0, Command.HELLO, name, "", credential)))
        try:
            first, rest = _first_message(transport, decoder, deadline, "WELCOME")
        except ProtocolError as e:
            _refuse(sock, transport, name, "", e.error_text())
            raise
        peer = expected or first.sender
        if first.command == Command.ERROR:
            text = first.text()
            code = parse_error_text(text, ErrorCode.FORBIDDEN)[0] if text.find(" ") > 0 else ErrorCode.FORBIDDEN
            raise GmaError(code, "%s refused the link: %s" % (peer, text))
        if first.command != Command.WELCOME:
            e = ProtocolError(ErrorCode.MALFORMED, "expected WELCOME, got " + Command.name(first.command))
            _refuse(sock, transport, name, first.sender, e.error_text())
            raise e
        link = Link(transport, True, name, peer, listener, decoder, ping_interval)
        return link, rest
    except BaseException:
        sock.close()
        raise


def accept(sock, name, listener, ping_interval, max_message_bytes, authenticate, tls_context=None):
    """Runs TLS and HELLO/WELCOME on an accepted socket: the open link and what came after HELLO, or None when
    the peer was refused (it was told why) or went away.

    ``authenticate(hello, transport)`` answers the peer's identity, or raises GmaError UNAUTHORIZED or
    FORBIDDEN (or QUEUE_FULL), which the peer is answered with before the link closes."""
    deadline = time.monotonic() + HANDSHAKE_SECONDS
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    transport = Plain(sock)
    hello = None
    try:
        if tls_context is not None:
            transport = Tls(sock, tls_context, True)
            try:
                transport.handshake(deadline)
            except PlaintextPeer:
                sock.settimeout(1.0)
                _refuse(sock, Plain(sock), name, "", b"UNAUTHORIZED this port speaks TLS: connect with TLS")
                return None
        decoder = _wire.StreamDecoder(max_message_bytes, _wire.HANDSHAKE_MAX_DATA)
        hello, rest = _first_message(transport, decoder, deadline, "HELLO")
        if hello.command != Command.HELLO:
            raise ProtocolError(ErrorCode.MALFORMED, "expected HELLO first, got " + Command.name(hello.command))
        try:
            identity = authenticate(hello, transport)
        except GmaError as e:
            listener.log_info("%s: refused a link (HELLO from \"%s\"): %s %s" % (name, hello.sender, e.code,
                                                                                 e.sentence))
            _refuse(sock, transport, name, hello.sender, ("%s %s" % (e.code, e.sentence)).encode("utf-8"))
            return None
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(transport.encode(_wire.pack(0, Command.WELCOME, name, hello.sender, b"")))
        return Link(transport, False, name, hello.sender, listener, decoder, ping_interval, identity), rest
    except ProtocolError as e:
        listener.log_warning("%s: closing a link in its handshake: %s" % (name, e))
        _refuse(sock, transport, name, hello.sender if hello is not None else "", e.error_text())
        return None
    except (OSError, GmaError):
        sock.close()
        return None


def _refuse(sock, transport, name, to, text):
    """Answers ERROR and closes, after the peer had a moment to read it."""
    try:
        sock.settimeout(BYE_DRAIN)
        sock.sendall(transport.encode(_wire.pack(0, Command.ERROR, name, to, text)))
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + BYE_DRAIN
        while time.monotonic() < deadline and sock.recv(65536):
            pass
    except OSError:
        pass
    finally:
        sock.close()
