"""A refusal comes before the ACK (protocol.md section 4, docs/pcservlet.md): a message the uplink's PC servlet
refused (its ERROR written before the ACK that passes it) fails its ``acknowledged()`` with the ERROR's code,
also when asked after the ACK; the messages around it are acknowledged. The send queue alone, a fake PC
servlet writing ERROR then ACK by hand, and the real Java PC servlets."""

import struct
import time

import pytest

import gma
from gma import _queue
from gma._errors import ErrorCode, GmaError
from gma._queue import FAIL, Sent, SendQueue
from gma._wire import Command
from support import RawServer


def _wait(what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError("not within %s s" % timeout)
        time.sleep(0.005)


def _code(sent, timeout=10):
    """The code ``sent.acknowledged`` raises, or None when it was acknowledged."""
    try:
        sent.acknowledged(timeout)
    except GmaError as e:
        return e.code
    return None


# ---------------------------------------------------------------------- the send queue alone


class _Link:
    pass


def _queued(n, link):
    """A queue carried by ``link`` with data messages 1..n written (in flight): their Sents."""
    q = SendQueue("pc@east")
    assert q.attach(link)
    sents = [Sent(i) for i in range(1, n + 1)]
    for s in sents:
        q.offer_data(b"m%d" % s.sequence, s, FAIL, 0)
    assert len(q.take(link)) == n
    return q, sents


def test_queue_fails_a_refused_message_at_its_ack_and_completes_the_others():
    link = _Link()
    q, s = _queued(5, link)
    q.refused(link, 2, GmaError(ErrorCode.QUEUE_FULL, "b@x is full"))
    q.refused(link, 3, GmaError(ErrorCode.NO_ROUTE, "no domain"))
    assert not any(x.done() for x in s), "refused, but the ACK has not come: nothing is settled yet"
    q.acknowledge(link, 4)
    assert [_code(x, 0) for x in s[:4]] == [None, ErrorCode.QUEUE_FULL, ErrorCode.NO_ROUTE, None]
    assert _code(s[1], 0) == ErrorCode.QUEUE_FULL, "asked again after the ACK: still refused"
    assert not s[4].done()
    assert q.refusals() == 0, "an ACK that passes a refusal forgets it"
    assert q.size() == (1, 2)


def test_queue_forgets_refusals_when_the_link_is_lost():
    link, nxt = _Link(), _Link()
    q, s = _queued(2, link)
    q.refused(link, 2, GmaError(ErrorCode.QUEUE_FULL, "b@x is full"))
    assert q.detach(link) and q.refusals() == 0
    assert q.attach(nxt)
    assert len(q.take(nxt)) == 2, "what was in flight goes again on the next link"
    q.acknowledge(nxt, 2)
    assert [_code(x, 0) for x in s] == [None, None], "the next link took it: the old refusal is gone"


def test_queue_ignores_a_refusal_on_another_link_or_with_nothing_in_flight():
    link = _Link()
    q, s = _queued(1, link)
    q.refused(_Link(), 1, GmaError(ErrorCode.NO_ROUTE, "not the carrier"))
    assert q.refusals() == 0
    q.acknowledge(link, 1)
    q.refused(link, 1, GmaError(ErrorCode.NO_ROUTE, "after its ACK"))
    assert q.refusals() == 0 and _code(s[0], 0) is None


def test_queue_remembers_at_most_max_refused(monkeypatch):
    monkeypatch.setattr(_queue, "MAX_REFUSED", 3)
    link = _Link()
    q, s = _queued(5, link)
    for seq in (1, 2, 3, 4, 5):
        q.refused(link, seq, GmaError(ErrorCode.QUEUE_FULL, "full"))
    assert q.refusals() == 3
    q.acknowledge(link, 5)
    assert [_code(x, 0) for x in s] == [None, None] + [ErrorCode.QUEUE_FULL] * 3, "the oldest were forgotten"
    assert _queue.MAX_REFUSED == 3 and q.refusals() == 0


def test_queue_close_forgets_refusals():
    link = _Link()
    q, s = _queued(1, link)
    q.refused(link, 1, GmaError(ErrorCode.NO_ROUTE, "x"))
    q.close(GmaError(ErrorCode.SHUTTING_DOWN, "closed"))
    assert q.refusals() == 0 and _code(s[0], 0) == ErrorCode.SHUTTING_DOWN


# ---------------------------------------------------------------------- a fake PC servlet on the wire


def _uplinked(world, server, label):
    """A consumer in east whose uplink is the fake PC servlet ``server``: (consumer, the raw peer)."""
    c = gma.Consumer(registry=world.registry, domain="east", label=label, pc="127.0.0.1:%d" % server.port,
                     ping_interval=5)
    peer = server.accepted()
    hello = peer.next(skip=())
    assert hello.command == Command.HELLO and hello.sender == c.name
    peer.send(Command.WELCOME, "pc@east", c.name)
    return c, peer


def _error(peer, c, sender, seq, text):
    peer.send(Command.ERROR, sender, c.name, seq, text.encode("utf-8"))


def _ack(peer, c, count):
    peer.send(Command.ACK, "pc@east", c.name, 0, struct.pack(">Q", count))


def test_fake_pc_servlet_error_then_ack_fails_only_the_uplinks_refusals(world):
    server = RawServer()
    c, peer = _uplinked(world, server, "refusedfake")
    try:
        to = ["a-aaaaaa@west", "x@", "slow-aaaaaa@west", "gone-aaaaaa@west", "b-aaaaaa@west"]
        sent = [c.send(t, b"n=%d" % i) for i, t in enumerate(to)]
        got = [peer.next() for _ in to]
        assert [m.to for m in got] == to and [m.sequence for m in got] == [s.sequence for s in sent]
        # the PC servlet's own refusal, a full destination in another domain: refusals, before the ACK
        _error(peer, c, "pc@east", got[1].sequence, 'NO_ROUTE "x@" names no domain')
        _error(peer, c, "slow-aaaaaa@west", got[2].sequence, "QUEUE_FULL slow-aaaaaa@west is full")
        # from further on: an answer that leaves the ACK as it is, however early it comes
        _error(peer, c, "gone-aaaaaa@west", got[3].sequence, "NO_ROUTE gone-aaaaaa@west is not registered")
        # QUEUE_FULL from an endpoint of this very domain (its own executor's): not the uplink's refusal
        _error(peer, c, "full-aaaaaa@east", got[4].sequence, "QUEUE_FULL full-aaaaaa@east is full")
        _ack(peer, c, len(to))
        _wait(lambda: all(s.done() for s in sent))
        # asked after the ACK
        assert [_code(s) for s in sent] == [None, ErrorCode.NO_ROUTE, ErrorCode.QUEUE_FULL, None, None]
        with pytest.raises(gma.GmaError) as e:
            sent[1].acknowledged(1)
        assert e.value.code == ErrorCode.NO_ROUTE
        assert e.value.sentence == 'pc@east answered ERROR NO_ROUTE "x@" names no domain'
        assert c._core._uplink.queue.refusals() == 0
        # an ERROR after the ACK changes nothing: the message was acknowledged
        late = c.send("c-aaaaaa@west", b"late")
        m = peer.next()
        _ack(peer, c, len(to) + 1)
        _wait(late.done)
        _error(peer, c, "pc@east", m.sequence, "FORBIDDEN too late")
        time.sleep(0.1)
        assert _code(late) is None and c._core._uplink.queue.refusals() == 0
    finally:
        c.close()
        server.close()


def test_fake_pc_servlet_refusal_forgotten_when_the_uplink_is_lost(world):
    server = RawServer()
    c, peer = _uplinked(world, server, "refusedlost")
    try:
        s = c.send("a-aaaaaa@west", b"again")
        m = peer.next()
        _error(peer, c, "pc@east", m.sequence, "FORBIDDEN not now")
        _wait(lambda: c._core._uplink.queue.refusals() == 1)
        peer.close()  # lost before the ACK: the message goes again on the next uplink, answered afresh
        nxt = server.accepted(2)
        assert nxt.next(skip=()).command == Command.HELLO
        nxt.send(Command.WELCOME, "pc@east", c.name)
        again = nxt.next()
        assert again.sequence == m.sequence and again.data == b"again"
        _ack(nxt, c, 1)
        assert _code(s) is None
    finally:
        c.close()
        server.close()


# ---------------------------------------------------------------------- the Java PC servlet


def test_java_pc_servlet_refusals_fail_and_accepted_messages_succeed(world):
    with gma.Consumer(registry=world.registry, domain="west", label="refused", pc=world.pc["west"]) as c:
        # a name with no domain, and the PC servlet's own name: west's PC servlet refuses them itself, ERROR
        # NO_ROUTE from pc@west before the ACK; the messages around them go to east's pong and are taken
        to = [world.pong, "nobody@", world.pong, "pc@west", world.pong]
        sent = [c.send(t, b"m%d" % i) for i, t in enumerate(to)]
        codes = [_code(s, 15) for s in sent]
        assert codes == [None, ErrorCode.NO_ROUTE, None, ErrorCode.NO_ROUTE, None]
        with pytest.raises(gma.GmaError) as e:
            sent[1].acknowledged(1)
        assert e.value.sentence.startswith('pc@west answered ERROR NO_ROUTE "nobody@" names no domain'), e.value
        # a name in another domain that is not registered there: taken by west's PC servlet (acknowledged),
        # its NO_ROUTE comes later, from east, and is not the uplink's refusal
        later = c.send("nobody-aaaaaa@east", b"gone")
        assert _code(later, 15) is None
        assert c._core._uplink.queue.refusals() == 0
        # a request refused the same way fails with the same code (its answer is that ERROR)
        with pytest.raises(gma.GmaError) as e:
            c.request("nobody@", b"?", timeout=10)
        assert e.value.code == ErrorCode.NO_ROUTE
        assert c.request(world.pong, b"still there", timeout=15) == b"still there"
