"""The send queue alone (no jars): what an ACK does to the Sents it passes, with waiters and callbacks or
without, and the bounds kept by the queue's fast offer."""

import threading
import time

from gma._errors import ErrorCode, GmaError
from gma._queue import FAIL, Sent, SendQueue


class _Link:
    pass


def test_an_ack_wakes_a_waiter_runs_callbacks_and_completes_the_others():
    link = _Link()
    q = SendQueue("b@x")
    q.attach(link)
    s = [Sent(i) for i in range(1, 5)]
    for x in s:
        assert q.offer(b"m%d" % x.sequence, x) > 0
    q.take(link)
    calls = []
    s[0].add_done_callback(calls.append)
    s[2].add_done_callback(calls.append)
    woke = []
    t = threading.Thread(target=lambda: woke.append(s[1].acknowledged(10) or "woke"))
    t.start()
    deadline = time.monotonic() + 5
    while s[1]._event is None and time.monotonic() < deadline:
        time.sleep(0.001)
    q.acknowledge(link, 2)  # no refusal among them: the common path
    t.join(5)
    assert woke == ["woke"] and calls == [None]
    q.refused(link, 3, GmaError(ErrorCode.QUEUE_FULL, "b@x is full"))
    q.acknowledge(link, 4)
    assert calls[0] is None and isinstance(calls[1], GmaError) and calls[1].code == ErrorCode.QUEUE_FULL
    assert all(x.done() for x in s)
    s[3].acknowledged(0)
    late = []
    s[3].add_done_callback(late.append)
    assert late == [None], "a callback added once it is done runs at once"


def test_offer_keeps_the_bounds_and_leaves_a_full_or_closed_queue_to_the_policy():
    q = SendQueue("b@x", max_bytes=10, max_messages=2)
    assert q.offer(b"abcd", Sent(1)) == 4
    assert q.offer(b"efgh", Sent(2)) == 8
    assert q.offer(b"i", Sent(3)) == -1, "two messages, the most"
    assert q.size() == (2, 8)
    q2 = SendQueue("b@x", max_bytes=10)
    assert q2.offer(b"0123456789", Sent(1)) == 10
    assert q2.offer(b"x", Sent(2)) == -1, "10 bytes, the most"
    try:
        q2.offer_data(b"x", Sent(3), FAIL, 0)
        raise AssertionError("not refused")
    except GmaError as e:
        assert e.code == ErrorCode.QUEUE_FULL
    q2.close(GmaError(ErrorCode.SHUTTING_DOWN, "closed"))
    assert q2.offer(b"x", Sent(4)) == -1


def test_a_peer_keeps_the_encoded_names_of_at_most_max_names_kept_destinations(monkeypatch):
    from gma import _peers

    monkeypatch.setattr(_peers, "MAX_NAMES_KEPT", 3)
    peer = _peers._Peer("pc@east", 1 << 20, 1000)
    for i in range(10):
        name = "dest%d@west" % i
        peer.remember_name(name, name.encode())
        peer.forms[name] = ("form",)
        peer.replies[name] = ("reply",)
        assert len(peer.to_bytes) <= 3 and len(peer.forms) <= 3 and len(peer.replies) <= 3
        assert peer.to_bytes[name] == name.encode()
