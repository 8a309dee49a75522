"""Requests and their replies on one link: the caller's fast path (the REQUEST written at once,
``Link.write_taken``; the REPLY read by the waiting caller itself and taken without the decoder when a read
begins with it, ``Link.await_reply``) against what it must not break: several callers at once, a reply read
by another caller's thread, late replies, replies that do not come alone or whole, an answer from the wrong
name, a link cut while a caller waits, the queue's bounds, and deadlines shorter and longer than one wait
in ``recv``."""

import queue
import threading
import time

import pytest

import gma
from gma import _link, _wire
from gma._endpoint import Counters
from gma._peers import _Awaited
from gma._wire import Command
from support import RawServer

PEER = "raw-bbbbbb@east"


@pytest.fixture
def responder(world):
    """A Python endpoint answering ``slow:SECONDS:PAYLOAD`` with PAYLOAD after SECONDS (from a timer thread),
    ``never`` with nothing, anything else with itself; ``asked`` has each request's data as it arrives."""
    asked = queue.Queue()

    def on_message(m):
        data = m.data
        asked.put(data)
        if data.startswith(b"slow:"):
            _, seconds, payload = data.split(b":", 2)
            threading.Timer(float(seconds), m.reply, (payload,)).start()
        elif data != b"never":
            m.reply(data)

    with gma.Producer(registry=world.registry, domain="east", label="answers", on_message=on_message) as p:
        p.asked = asked
        yield p


@pytest.fixture
def asker(world):
    with gma.Consumer(registry=world.registry, domain="east", label="asker") as c:
        yield c


def _warm(c, to):
    """The first request opens the link (and waits on its latch, answered by the reader thread); those after
    it take the fast path."""
    assert c.request(to, b"warm", timeout=10) == b"warm"


def _drain(q):
    while not q.empty():
        q.get_nowait()


# ---------------------------------------------------------------------- several callers on one link

def test_concurrent_requests_on_one_link_each_get_their_own_reply(world):
    with gma.Consumer(registry=world.registry, domain="east", label="many") as c:
        _warm(c, world.pong)
        wrong = []

        def run(i):
            for j in range(200):
                data = b"%d:%d:" % (i, j) + bytes(j % 50)
                got = c.request(world.pong, data, timeout=10)
                if got != data:
                    wrong.append((data, got))

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert wrong == []
        assert c.stats()["links"] == 1  # all of them on the one link to the pong


def test_a_reply_read_by_another_callers_thread_reaches_its_caller(responder, asker):
    _warm(asker, responder.name)
    _drain(responder.asked)
    slow = {}

    def ask_slowly():
        t = time.monotonic()
        slow["reply"] = asker.request(responder.name, b"slow:1.0:first", timeout=10)
        slow["took"] = time.monotonic() - t

    a = threading.Thread(target=ask_slowly)
    a.start()
    assert responder.asked.get(timeout=5) == b"slow:1.0:first"
    time.sleep(0.1)  # the slow caller reads the link now, waiting for its reply
    t = time.monotonic()
    assert asker.request(responder.name, b"fast", timeout=10) == b"fast"
    fast = time.monotonic() - t
    a.join(10)
    assert slow["reply"] == b"first" and slow["took"] >= 0.9
    # had the fast reply waited for the reading caller to be done, it would have taken most of a second
    assert fast < 0.5, fast


# ---------------------------------------------------------------------- deadlines and late replies

def test_a_request_times_out_and_its_late_reply_is_ignored(responder, asker):
    _warm(asker, responder.name)
    before = asker.stats()["duplicates"]
    t = time.monotonic()
    with pytest.raises(gma.GmaError) as e:
        asker.request(responder.name, b"slow:0.6:late", timeout=0.2)
    took = time.monotonic() - t
    assert e.value.code == gma.ErrorCode.TIMEOUT
    assert 0.18 < took < 1.5, took
    # the late reply comes while this request's caller reads the link: not its reply, counted and dropped
    assert asker.request(responder.name, b"slow:0.8:mine", timeout=5) == b"mine"
    assert asker.stats()["duplicates"] == before + 1


@pytest.mark.parametrize("timeout", [0.02, 0.3])
def test_a_request_nobody_answers_times_out_near_its_deadline(responder, asker, timeout):
    # 0.02 s: shorter than one wait in recv (RECV_WAIT), the caller polls; 0.3 s: several waits in recv
    assert timeout < _link.RECV_WAIT or timeout > 3 * _link.RECV_WAIT
    _warm(asker, responder.name)
    t = time.monotonic()
    with pytest.raises(gma.GmaError) as e:
        asker.request(responder.name, b"never", timeout=timeout)
    took = time.monotonic() - t
    assert e.value.code == gma.ErrorCode.TIMEOUT
    assert timeout * 0.9 < took < timeout + 1.0, took
    assert asker.request(responder.name, b"after", timeout=5) == b"after"  # the link is fine


def test_a_reply_taken_after_its_request_timed_out_is_counted_not_delivered():
    class Core:
        counters = Counters()
        _requests = {}

    core = Core()
    aw = _Awaited(core, "x@east", 1.0, 7, time.monotonic() + 1.0)
    core._requests[7] = aw
    timeout = gma.GmaError(gma.ErrorCode.TIMEOUT, "late")
    assert core._requests.pop(7) is aw and aw.finish(error=timeout)  # what the ticker does at the deadline
    aw.answered(b"too late")  # then the reply, read by its caller
    assert (aw.done, aw.reply, aw.error) == (True, None, timeout)
    assert (core.counters.received, core.counters.duplicates) == (1, 1)
    on_time = _Awaited(core, "x@east", 1.0, 8, time.monotonic() + 1.0)
    core._requests[8] = on_time
    on_time.answered(b"in time")
    assert (on_time.done, on_time.reply, on_time.error) == (True, b"in time", None)
    assert 8 not in core._requests and core.counters.duplicates == 1


def test_a_waiter_is_woken_by_an_answer_from_another_thread_and_gives_up_at_its_timeout():
    aw = _Awaited(None, "x@east", 5.0, 1, time.monotonic() + 5.0)
    threading.Timer(0.1, aw.finish, kwargs={"reply": b"late"}).start()
    t = time.monotonic()
    assert aw.wait(5.0) and aw.reply == b"late"
    assert time.monotonic() - t < 2.0
    assert aw.wait(0) is True  # answered: at once
    never = _Awaited(None, "x@east", 5.0, 2, time.monotonic() + 5.0)
    t = time.monotonic()
    assert never.wait(0.1) is False and not never.done
    assert 0.08 < time.monotonic() - t < 2.0


# ---------------------------------------------------------------------- a link cut while its caller waits

def test_a_request_whose_link_is_cut_while_it_waits_still_gets_its_reply(responder, asker):
    _warm(asker, responder.name)
    _drain(responder.asked)
    got = {}

    def ask():
        try:
            got["reply"] = asker.request(responder.name, b"slow:0.5:after the cut", timeout=10)
        except gma.GmaError as e:
            got["error"] = e

    a = threading.Thread(target=ask)
    a.start()
    assert responder.asked.get(timeout=5) == b"slow:0.5:after the cut"
    asker._core.sever_links()  # the caller stops reading; the reply comes on the next link, another thread's
    a.join(10)
    assert got == {"reply": b"after the cut"}


# ---------------------------------------------------------------------- replies not alone, not whole, not right

@pytest.fixture
def scripted(world):
    """A Consumer whose peer PEER is a raw socket the test scripts; the link is open and one request answered
    (the second takes the fast path). Yields (consumer, raw peer, messages the consumer's handler got)."""
    server = RawServer()
    got = queue.Queue()
    with gma.Consumer(registry=world.registry, domain="east", label="asks-raw", on_message=got.put) as c:
        c._core._addresses[PEER] = ("127.0.0.1", server.port)
        first = _Ask(c, b"one")
        peer = server.accepted()
        hello = peer.next(skip=())
        assert hello.command == Command.HELLO
        peer.send(Command.WELCOME, PEER, c.name)
        req = peer.next()
        assert (req.command, req.data) == (Command.REQUEST, b"one")
        peer.send(Command.REPLY, PEER, c.name, req.sequence, b"AAAA")
        assert first.result() == b"AAAA"
        yield c, peer, got
    server.close()


def _asked(peer):
    """The request the raw peer got, once its caller waits in ``recv``: what the peer sends then is that
    caller's to read (the fast path), not the link's reader thread's."""
    req = peer.next()
    assert req.command == Command.REQUEST
    time.sleep(0.05)
    return req


class _Ask:
    """A request on a thread of its own."""

    def __init__(self, c, data, timeout=5):
        self.out = {}
        self.thread = threading.Thread(target=self._run, args=(c, data, timeout))
        self.thread.start()

    def _run(self, c, data, timeout):
        try:
            self.out["reply"] = c.request(PEER, data, timeout=timeout)
        except gma.GmaError as e:
            self.out["error"] = e

    def result(self, timeout=10):
        self.thread.join(timeout)
        assert not self.thread.is_alive()
        if "error" in self.out:
            raise self.out["error"]
        return self.out["reply"]


def test_a_reply_and_a_message_in_one_read_are_both_taken(scripted):
    c, peer, got = scripted
    ask = _Ask(c, b"two")
    req = _asked(peer)
    peer.send_raw(_wire.pack(req.sequence, Command.REPLY, PEER, c.name, b"BBBB")
                  + _wire.pack(9, Command.DATA, PEER, c.name, b"after the reply"))
    assert ask.result() == b"BBBB"
    assert got.get(timeout=5).data == b"after the reply"


@pytest.mark.parametrize("split", [10, "in the data"])
def test_a_reply_that_comes_in_pieces_is_taken_whole(scripted, split):
    c, peer, _ = scripted
    ask = _Ask(c, b"two")
    req = _asked(peer)
    reply = _wire.pack(req.sequence, Command.REPLY, PEER, c.name, b"BBBB")
    # in the data: the header and names have come, not all the data; the last reply's bytes (AAAA, as long)
    # are still in the read buffer past what was read, and must not be taken for the rest
    at = len(reply) - 2 if split == "in the data" else split
    peer.send_raw(reply[:at])
    time.sleep(0.1)
    peer.send_raw(reply[at:])
    assert ask.result() == b"BBBB"


def test_a_reply_for_another_request_before_this_ones_in_one_read(scripted):
    c, peer, _ = scripted
    before = c.stats()["duplicates"]
    ask = _Ask(c, b"two")
    req = _asked(peer)
    peer.send_raw(_wire.pack(req.sequence + 1000, Command.REPLY, PEER, c.name, b"none's")
                  + _wire.pack(req.sequence, Command.REPLY, PEER, c.name, b"BBBB"))
    assert ask.result() == b"BBBB"
    assert c.stats()["duplicates"] == before + 1


def test_a_reply_from_another_name_is_refused(scripted):
    c, peer, _ = scripted
    ask = _Ask(c, b"two", timeout=0.5)
    req = _asked(peer)
    impostor = "raw-cccccc@east"  # as long as PEER: only the name's bytes differ
    assert len(impostor) == len(PEER) and impostor != PEER
    peer.send(Command.REPLY, impostor, c.name, req.sequence, b"not from PEER")
    with pytest.raises(gma.GmaError) as e:
        ask.result()
    assert e.value.code == gma.ErrorCode.TIMEOUT
    assert c.stats()["refused_answers"] == 1


# ---------------------------------------------------------------------- the queue's bounds

def test_a_request_counts_against_the_queue_bounds(world):
    """The fast path puts a REQUEST in flight only when there is room: with three messages unacknowledged
    (max_queued_messages 3), FAIL refuses a request at once and BLOCK waits, then fails."""
    server = RawServer()
    for i, policy in enumerate((gma.FAIL, gma.BLOCK)):
        with gma.Consumer(registry=world.registry, domain="east", label="bounded", max_queued_messages=3,
                          policy=policy, block_timeout=0.3) as c:
            c._core._addresses[PEER] = ("127.0.0.1", server.port)
            first = _Ask(c, b"one")
            peer = server.accepted(i + 1)
            assert peer.next(skip=()).command == Command.HELLO
            peer.send(Command.WELCOME, PEER, c.name)
            req = peer.next()
            peer.send(Command.REPLY, PEER, c.name, req.sequence, b"one")  # answered, never acknowledged
            assert first.result() == b"one"
            c.send(PEER, b"a")
            c.send(PEER, b"b")  # with the request: three unacknowledged
            assert [peer.next().data for _ in range(2)] == [b"a", b"b"]
            t = time.monotonic()
            with pytest.raises(gma.GmaError) as e:
                c.request(PEER, b"no room", timeout=5)
            assert e.value.code == gma.ErrorCode.QUEUE_FULL
            took = time.monotonic() - t
            assert took < 0.25 if policy is gma.FAIL else 0.25 < took < 3, (policy, took)
            peer.send(Command.ACK, PEER, c.name, 0, (3).to_bytes(8, "big"))
            deadline = time.monotonic() + 5
            while c.stats()["queued_messages"] and time.monotonic() < deadline:
                time.sleep(0.01)  # the ACK is read by the link's reader thread
            ask = _Ask(c, b"room again")
            req = peer.next()
            assert req.data == b"room again"
            peer.send(Command.REPLY, PEER, c.name, req.sequence, b"yes")
            assert ask.result() == b"yes"
    server.close()
