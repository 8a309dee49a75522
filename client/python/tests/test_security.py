"""Security on, with the files of gma keys: TLS on every hop, Ed25519 tokens made here and checked by Java
(and Java's checked here), against a secured registry, PC servlets and gma pong."""

import pytest

import gma
from conftest import run_gma
from gma._security import Security


def _alice(w):
    return Security.from_directory(w.keys, identity="alice")


def test_tokens_made_here_are_taken_by_java_in_one_domain(secure_world):
    w = secure_world
    with gma.Consumer(registry=w.registry, domain="east", label="ping", security=_alice(w)) as c:
        assert c.request(w.pong, b"secret hello", timeout=10) == b"secret hello"
        assert w.pong in [r["name"] for r in c.query("SELECT name FROM endpoints")]


def test_across_domains_through_secured_pc_servlets(secure_world):
    w = secure_world
    with gma.Consumer(registry=w.registry, domain="west", label="ping", pc=w.pc["west"],
                      security=_alice(w)) as c:
        assert c.request(w.pong, b"over TLS", timeout=15) == b"over TLS"


def test_java_ping_reaches_a_secured_python_pong(secure_world):
    w = secure_world
    from gma.pong import start
    with start(w.registry, "east", "pysecure", pc=w.pc["east"], security=_alice(w)):
        for args in (["--domain", "east"], ["--domain", "west", "--pc", w.pc["west"]]):
            status, out = run_gma(["ping", "pysecure@east", "--registry", w.registry, "--security", w.keys,
                                   "--identity", "alice", "-c", "3", "-i", "0"] + args)
            assert status == 0, out
            assert "3 transmitted, 3 received, 0% loss" in out, out


def test_a_peer_without_credentials_is_refused(secure_world):
    w = secure_world
    with gma.Consumer(registry=w.registry, domain="east", label="ping", security=_alice(w)) as c:
        anonymous = Security(_alice(w).ca_file)  # TLS, no identity: HELLO carries no token
        from gma import _handshake
        pong = c._core._registry.lookup(w.pong)
        with pytest.raises(gma.GmaError) as e:
            _handshake.connect((pong["host"], int(pong["port"])), c.name, b"", c._core, 15, 1 << 24,
                          anonymous.client_context(), expected=w.pong)
        assert e.value.code == gma.ErrorCode.UNAUTHORIZED, e.value


def test_a_client_certificate_stands_for_a_token_at_a_python_endpoint(secure_world):
    """Mutual TLS (docs/security.md): a HELLO without a token, over TLS with alice's client certificate, is
    alice's, and a Python endpoint takes the link under the name alice registered; the same HELLO without the
    certificate is refused, and so is the certificate with a name nobody registered."""
    w = secure_world
    from gma.pong import start
    from gma import _handshake
    alice = _alice(w)
    assert alice.cert_file and alice.cert_file.endswith("client-alice.pem"), alice.cert_file
    with start(w.registry, "east", "pymtls", security=alice), \
            gma.Consumer(registry=w.registry, domain="east", label="ping", security=alice) as c:
        info = c._core._registry.lookup("pymtls@east")
        address = (info["host"], int(info["port"]))

        def hello(name, context):
            return _handshake.connect(address, name, b"", c._core, 15, 1 << 24, context, expected="pymtls@east")

        link, _ = hello(c.name, alice.client_context())
        link.close_without_bye()
        with pytest.raises(gma.GmaError) as e:
            hello(c.name, Security(alice.ca_file).client_context())
        assert e.value.code == gma.ErrorCode.UNAUTHORIZED, e.value
        with pytest.raises(gma.GmaError) as e:
            hello("nobody-aaaaaa@east", alice.client_context())
        assert e.value.code == gma.ErrorCode.FORBIDDEN, e.value
        assert "nobody registered that name" in str(e.value), e.value


def test_plaintext_registry_url_is_refused_with_security(secure_world):
    w = secure_world
    with pytest.raises(ValueError) as e:
        gma.Consumer(registry=w.registry.replace("https", "http"), domain="east", label="x", security=_alice(w))
    assert "expected scheme 'https'" in str(e.value)


def test_plaintext_to_a_secured_python_endpoint_is_told_to_use_tls(secure_world):
    from support import RawPeer
    w = secure_world
    with gma.Producer(registry=w.registry, domain="east", label="tlsonly", security=_alice(w)) as p:
        peer = RawPeer.connect(p._core.port)
        peer.send(gma.Command.HELLO, "x-aaaaaa@east", "")
        m = peer.next()
        assert m.command == gma.Command.ERROR
        assert m.text() == "UNAUTHORIZED this port speaks TLS: connect with TLS"
        assert peer.closed_within(2)
        peer.close()


def test_a_python_peer_with_a_token_for_another_audience_is_refused(secure_world):
    w = secure_world
    from gma import _handshake
    alice = _alice(w)
    with gma.Producer(registry=w.registry, domain="east", label="aud", security=alice) as p:
        wrong = alice.bearer("someone-else@east").encode()
        with pytest.raises(gma.GmaError) as e:
            _handshake.connect(("127.0.0.1", p._core.port), "x@east", wrong, p._core, 15, 1 << 24,
                          alice.client_context(), server_hostname="127.0.0.1", expected=p.name)
        assert e.value.code == gma.ErrorCode.UNAUTHORIZED
        assert "WRONG_AUDIENCE" in e.value.sentence, e.value.sentence


def test_tls_stream_ends_at_the_peers_close_notify(tmp_path):
    """A peer that ends TLS (close_notify) with the connection still open: recv answers what came before it,
    then b'' (the end of the stream). CPython's SSLObject.read answers b'' again and again once only the peer
    has shut down, on which the reader thread used to loop forever holding the TLS lock (a close hung on it)."""
    import shutil
    import socket
    import ssl
    import subprocess
    import threading
    import time

    from gma._transport import Tls

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_context.load_verify_locations(cert)
    a, b = socket.socketpair()
    sent = threading.Event()

    def serve():
        s = server_context.wrap_socket(b, server_side=True)
        s.sendall(b"last words")
        try:
            s.unwrap()  # sends close_notify (then waits for the answer, which never comes)
        except (OSError, ValueError):
            pass
        finally:
            sent.set()

    threading.Thread(target=serve, daemon=True).start()
    tls = Tls(a, client_context, False, "localhost")
    tls.handshake(time.monotonic() + 5)
    a.settimeout(None)
    got = []

    def read():
        while True:
            data = tls.recv()
            got.append(data)
            if not data:
                return

    time.sleep(0.3)  # the data and the close_notify both wait in the socket: one recv reads them together
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "recv did not end at the close_notify"
    assert b"".join(got) == b"last words" and got[-1] == b""
    a.close()
    b.close()
