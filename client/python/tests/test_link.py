"""A Python endpoint against raw peers: bad input answered with Java's ERROR and close, deduplication,
PING/PONG and keepalive, ACKs, NO_ROUTE, the send queue's policies, the lease."""

import queue
import struct
import time

import pytest

import gma
from gma import _wire
from gma._wire import Command
from support import RawPeer, RawServer

PEER = "raw-aaaaaa@east"


@pytest.fixture
def sink(world):
    got = queue.Queue()

    def on_message(m):
        if m.reply_expected:
            m.reply(b"re:" + m.data)
        got.put(m)

    with gma.Producer(registry=world.registry, domain="east", label="sink", on_message=on_message,
                      ping_interval=0.3) as p:
        p.got = got
        yield p


def _port(endpoint):
    return endpoint._core.port


def _error(m):
    assert m.command == Command.ERROR, m
    return m.text()


def _bad(sink, data, after_hello=True):
    peer = RawPeer.connect(_port(sink))
    try:
        if after_hello:
            peer.hello(PEER, sink.name)
        peer.send_raw(data)
        m = peer.next()
        assert peer.closed_within(2.0), "the link stayed open"
        return m
    finally:
        peer.close()


def test_bad_magic_is_malformed_and_closes(sink):
    m = _bad(sink, b"GX" + bytes(18))
    assert _error(m) == 'MALFORMED magic 0x4758 is not 0x474D ("GM"): this is not a GMA stream'
    assert m.sender == sink.name and m.to == PEER and m.sequence == 0


def test_oversized_length_is_too_large_from_the_header(sink):
    header = struct.pack(">2sBBBBBBQI", b"GM", 1, 1, 0, 3, 3, 0, 1, 1 << 31)
    assert _error(_bad(sink, header)) == "TOO_LARGE dataLength 2147483648 exceeds maxMessageBytes 16777216"


def test_reserved_command_is_malformed(sink):
    assert _error(_bad(sink, _wire.pack(1, 0x41, PEER, sink.name)[:3] + b"\x09")) == \
        "MALFORMED command 0x09 is reserved"


def test_unsupported_version(sink):
    assert _error(_bad(sink, b"GM\x02")) == "UNSUPPORTED_VERSION version 2 is not supported (this side speaks" \
                                            " version 1)"


def test_hello_after_the_handshake_is_malformed(sink):
    assert _error(_bad(sink, _wire.pack(0, Command.HELLO, PEER, ""))) == "MALFORMED HELLO after the handshake"


def test_long_hello_is_too_large_before_the_handshake(sink):
    m = _bad(sink, _wire.pack(0, Command.HELLO, PEER, "", b"x" * 5000), after_hello=False)
    assert _error(m) == "TOO_LARGE dataLength 5000 exceeds 4096, the limit until the handshake is over"


def test_data_before_hello_is_malformed(sink):
    m = _bad(sink, _wire.pack(1, Command.DATA, PEER, sink.name), after_hello=False)
    assert _error(m) == "MALFORMED expected HELLO first, got DATA"


def test_bad_input_on_one_link_leaves_the_others_serving(sink, world):
    good = RawPeer.connect(_port(sink))
    good.hello("good-bbbbbb@east")
    _bad(sink, b"garbage!" * 3)
    good.send(Command.REQUEST, "good-bbbbbb@east", sink.name, 7, b"still?")
    m = good.next()
    assert (m.command, m.sequence, m.data) == (Command.REPLY, 7, b"re:still?")
    with gma.Consumer(registry=world.registry, domain="east", label="other") as c:
        assert c.request(sink.name, b"hi", timeout=5) == b"re:hi"
    good.close()


def test_duplicates_are_dropped_and_everything_is_acknowledged(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    for seq in (5, 5, 6, 5):
        peer.send(Command.DATA, PEER, sink.name, seq, b"#%d" % seq)
    got = [sink.got.get(timeout=5).data for _ in range(2)]
    assert got == [b"#5", b"#6"]
    assert sink.got.empty()
    counts = [0]
    while counts[-1] < 4:
        ack = peer.next(skip=(Command.PING,))
        assert ack.command == Command.ACK
        counts.append(struct.unpack(">Q", ack.data)[0])
    assert counts[-1] == 4 and counts == sorted(counts)
    assert sink.stats()["duplicates"] == 2
    peer.close()


def test_ping_is_answered_with_pong(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    peer.send(Command.PING, PEER, sink.name, 99, b"echo me")
    m = peer.next(skip=(Command.ACK,))
    assert (m.command, m.sequence, m.data, m.sender, m.to) == (Command.PONG, 99, b"echo me", sink.name, PEER)
    peer.close()


def test_ping_is_answered_after_the_ack_of_what_came_before_it(sink):
    # what a PC servlet with a spool relies on: it sends a PING after a batch, and learns at once, not within the
    # 20 ms an ACK may wait, that the endpoint took the batch
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    for seq in (1, 2, 3):
        peer.send(Command.DATA, PEER, sink.name, seq, b"x")
    peer.send(Command.PING, PEER, sink.name, 7, b"")
    acked = 0
    while True:  # until the PONG: the ACKs before it must cover all three
        m = peer.next(skip=(Command.PING,))
        if m.command == Command.PONG:
            break
        assert m.command == Command.ACK, m
        acked = struct.unpack(">Q", m.data)[0]
    assert acked == 3
    peer.close()


def test_idle_link_is_pinged_and_a_silent_peer_is_dropped(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    t = time.monotonic()
    m = peer.next(timeout=2, skip=())
    assert m.command == Command.PING and time.monotonic() - t < 0.8
    assert peer.closed_within(2.0)
    peer.close()


def test_message_for_another_name_is_no_route(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    peer.send(Command.DATA, PEER, "someone-else@east", 3, b"x")
    m = peer.next()
    assert _error(m) == "NO_ROUTE this is %s, not someone-else@east; an endpoint does not route" % sink.name
    assert m.sequence == 3
    peer.close()


def test_bye_makes_the_endpoint_forget_the_sender(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    peer.send(Command.DATA, PEER, sink.name, 1, b"a")
    sink.got.get(timeout=5)
    assert sink._core.remembers(PEER)
    peer.send(Command.BYE, PEER, sink.name)
    assert peer.closed_within(2.0)
    assert not sink._core.remembers(PEER)
    peer.close()


# ---------------------------------------------------------------------- the send queue

def _sender(world, **kw):
    return gma.Consumer(registry=world.registry, domain="east", label="src", max_queued_messages=3, **kw)


def test_fail_policy_refuses_when_the_peer_does_not_acknowledge(world):
    server = RawServer()
    with _sender(world, policy=gma.FAIL) as c:
        c._core._addresses[PEER] = ("127.0.0.1", server.port)
        sent = [c.send(PEER, b"m%d" % i) for i in range(3)]
        peer = server.accepted()
        with pytest.raises(gma.GmaError) as e:
            c.send(PEER, b"one too many")
        assert e.value.code == gma.ErrorCode.QUEUE_FULL
        hello = peer.next(skip=())
        assert hello.command == Command.HELLO and hello.sender == c.name
        peer.send(Command.WELCOME, PEER, c.name)
        for i in range(3):
            assert peer.next().data == b"m%d" % i
        peer.send(Command.ACK, PEER, c.name, 0, struct.pack(">Q", 2))
        sent[0].acknowledged(5)
        sent[1].acknowledged(5)
        assert not sent[2].done()
        c.send(PEER, b"room again")
        assert peer.next().data == b"room again"
    server.close()


def test_sends_of_mixed_commands_are_packed_as_the_wire_packs_them(world):
    server = RawServer()
    with gma.Consumer(registry=world.registry, domain="east", label="src") as c:
        c._core._addresses[PEER] = ("127.0.0.1", server.port)
        # send packs from a form per destination and command (EndpointCore.send): a change of command, of
        # size and of destination each read back as _wire.pack makes them
        plan = [(Command.DATA, b"a"), (0x50, b""), (0x50, bytes(300)), (Command.DATA, b"b" * 70000), (0xFF, b"z")]
        sent = [c._core.send(PEER, command, data) for command, data in plan[:3]]
        peer = server.accepted()
        assert peer.next(skip=()).command == Command.HELLO
        peer.send(Command.WELCOME, PEER, c.name)
        sent += [c._core.send(PEER, command, data) for command, data in plan[3:]]
        for (command, data), s in zip(plan, sent):
            m = peer.next()
            assert (m.command, m.flags, m.sender, m.to, m.sequence, m.data) == (command, 0, c.name, PEER, s.sequence,
                                                                                data)
        peer.send(Command.ACK, PEER, c.name, 0, struct.pack(">Q", len(plan)))
        for s in sent:
            s.acknowledged(5)
    server.close()


def test_block_policy_waits_then_fails_with_queue_full(world):
    server = RawServer()
    with _sender(world, policy=gma.BLOCK, block_timeout=0.3) as c:
        c._core._addresses[PEER] = ("127.0.0.1", server.port)
        for i in range(3):
            c.send(PEER, b"m%d" % i)
        t = time.monotonic()
        with pytest.raises(gma.GmaError) as e:
            c.send(PEER, b"blocked")
        assert e.value.code == gma.ErrorCode.QUEUE_FULL
        assert 0.25 < time.monotonic() - t < 2
    server.close()


def test_drop_oldest_drops_the_oldest_unsent(world):
    closed = RawServer()
    closed.close()  # a port nobody listens on: the messages stay unsent
    with _sender(world, policy=gma.DROP_OLDEST) as c:
        c._core._addresses[PEER] = ("127.0.0.1", closed.port)
        sent = [c.send(PEER, b"m%d" % i) for i in range(5)]
        for s in sent[:2]:
            with pytest.raises(gma.GmaError) as e:
                s.acknowledged(1)
            assert e.value.code == gma.ErrorCode.QUEUE_FULL
        assert not any(s.done() for s in sent[2:])
        assert c.stats()["drops"] == 2


def test_lost_lease_registers_the_same_name_again(world):
    with gma.Producer(registry=world.registry, domain="east", label="leased", lease=1.5) as p:
        registry = p._core._registry
        registry.unregister(p.name)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                assert registry.lookup(p.name)["name"] == p.name
                break
            except gma.GmaError:
                time.sleep(0.1)
        else:
            raise AssertionError("not registered again")


def test_table_query_for_a_table_not_published_is_malformed(sink):
    peer = RawPeer.connect(_port(sink))
    peer.hello(PEER)
    peer.send(0x41, PEER, sink.name, 11, b"\x01SELECT * FROM host_cpu")
    m = peer.next()
    assert m.sequence == 11
    assert _error(m) == "MALFORMED table host_cpu is not published by %s" % sink.name
    peer.send(0x44, PEER, sink.name, 12, b"\x00" + bytes(8) + b"\x01SELECT * FROM host_cpu")
    m = peer.next()
    assert m.sequence == 12 and _error(m) == "MALFORMED table host_cpu is not published by %s" % sink.name
    peer.send(0x44, PEER, sink.name, 14, b"\x04" + bytes(8) + b"\x01SELECT * FROM host_cpu")
    assert _error(peer.next()) == "MALFORMED TABLE_HISTORY's flags are 0x04; only 0x01 (latest) is defined"
    peer.send(0x46, PEER, sink.name, 13, b"app")
    assert sink.got.get(timeout=5).command == 0x46
    peer.close()


def _uplink_rounds(world, script, rounds):
    """A consumer whose PC servlet is a raw server: each link it opens is answered by ``script(peer, name)``; the
    milliseconds from the end of each link to the next connection."""
    server = RawServer()
    waits = []
    try:
        with gma.Consumer(registry=world.registry, domain="east", label="up", pc="127.0.0.1:%d" % server.port,
                          on_message=lambda m: None) as c:
            for n in range(1, rounds + 1):
                peer = server.accepted(n, timeout=10.0)
                if n > 1:
                    waits.append((time.monotonic() - closed_at) * 1000)
                m = peer.next()
                assert m.command == Command.HELLO, m
                script(peer, c.name)
                peer.close()
                closed_at = time.monotonic()
    finally:
        server.close()
    return waits


def test_an_uplink_that_fails_at_once_after_a_message_is_opened_again_after_the_back_off(world):
    # a message, then one the consumer refuses, on every link: that link did not work, and the consumer backs
    # off rather than reconnecting at once, again and again
    def script(peer, name):
        peer.send(Command.WELCOME, "pc@east", name)
        peer.send(Command.DATA, PEER, name, seq=1, data=b"x")
        peer.send(Command.HELLO, "pc@east", "")
        assert peer.closed_within(2.0), "the consumer kept the link"

    waits = _uplink_rounds(world, script, 4)
    assert sum(waits) >= 150, "the consumer came back after %s ms" % waits


def test_an_uplink_that_brought_messages_and_lasted_is_opened_again_at_once(world):
    def script(peer, name):
        peer.send(Command.WELCOME, "pc@east", name)
        peer.send(Command.DATA, PEER, name, seq=1, data=b"x")
        time.sleep(1.2)

    waits = _uplink_rounds(world, script, 4)
    assert max(waits) < 1000, "the consumer came back after %s ms" % waits


def test_a_handler_longer_than_three_ping_intervals_is_not_the_peers_silence(world):
    # the consumer pings every 0.2 s and takes a peer silent for 3 intervals for dead: its handler holds each
    # message 1 s, and the peer, which said nothing meanwhile, is not dead for that (before, the link was lost)
    got = queue.Queue()

    def slow(m):
        time.sleep(1.0)
        got.put(m.data)

    with gma.Consumer(registry=world.registry, domain="east", label="slowpy", ping_interval=0.2,
                      on_message=slow) as c, \
            gma.Producer(registry=world.registry, domain="east", label="fastpy") as p:
        for i in range(2):
            p.send(c.name, b"m%d" % i)
        assert [got.get(timeout=10), got.get(timeout=10)] == [b"m0", b"m1"]
        assert c.stats()["links_lost"] == 0, c.stats()


def test_links_past_max_links_are_refused_queue_full_and_one_gets_in_once_one_closes(world):
    with gma.Producer(registry=world.registry, domain="east", label="capped", max_links=3) as p:
        peers = []
        try:
            for i in range(3):
                peer = RawPeer.connect(_port(p))
                peer.hello("raw%d-aaaaaa@east" % i, p.name)
                peers.append(peer)
            fourth = RawPeer.connect(_port(p))
            try:
                fourth.send(Command.HELLO, "raw3-aaaaaa@east", "")
                text = _error(fourth.next())
                assert text.startswith("QUEUE_FULL %s has 3 links open, its most (max_links 3)" % p.name), text
                assert fourth.closed_within(2.0), "the refused link stayed open"
            finally:
                fourth.close()
            assert p.stats()["links_over_limit"] == 1
            peers.pop().close()
            deadline = time.monotonic() + 5
            while True:  # the closed link is seen gone by its reader thread
                again = RawPeer.connect(_port(p))
                again.send(Command.HELLO, "raw4-aaaaaa@east", "")
                m = again.next()
                if m.command == Command.WELCOME:
                    peers.append(again)
                    break
                again.close()
                assert time.monotonic() < deadline, "no link got in after one closed: " + _error(m)
                time.sleep(0.05)
        finally:
            for peer in peers:
                peer.close()


def test_connections_past_the_handshakes_cap_are_closed_at_once_and_the_endpoint_serves_on(sink):
    from gma import _endpoint
    import socket
    silent = []
    try:
        for _ in range(_endpoint.MAX_HANDSHAKES + 10):  # connect, and never say HELLO
            silent.append(socket.create_connection(("127.0.0.1", _port(sink))))
        deadline = time.monotonic() + 5
        while sink.stats()["connections_over_cap"] < 10:
            assert time.monotonic() < deadline, sink.stats()
            time.sleep(0.01)
        assert sink.stats()["connections_over_cap"] == 10, sink.stats()
    finally:
        for s in silent:
            s.close()
    # once the handshakes end (the peers closed), a link gets in again
    deadline = time.monotonic() + 10
    while True:
        peer = RawPeer.connect(_port(sink))
        try:
            peer.send(Command.HELLO, PEER, "")
            m = peer.next()
            if m.command == Command.WELCOME:
                break
        except (AssertionError, EOFError, OSError):
            pass  # closed at once while the silent connections' handshakes still held their places
        finally:
            peer.close()
        assert time.monotonic() < deadline, "no link got in after the silent connections closed"
        time.sleep(0.05)
