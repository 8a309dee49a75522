"""Reconnect and resend: the link is cut mid-stream by a proxy, and nothing is lost or duplicated."""

import collections
import queue
import threading
import time

import gma
from support import Proxy

N = 3000


def _host_port(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


def _stream_with_cuts(send, count, proxy, endpoint, cuts=3):
    """Sends ``count`` numbered messages, cutting the links ``cuts`` times on the way, each time once a link
    carries the stream: the proxy's connections, and the endpoint's own links (a peer may have opened one of its
    own, which the proxy does not see)."""
    at = {count * (i + 1) // (cuts + 1) for i in range(cuts)}
    for i in range(count):
        if i in at:
            deadline = time.monotonic() + 10
            while endpoint.stats()["links"] == 0 and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(0.01)  # messages in flight both ways
            proxy.cut()
            endpoint.sever_links()
        elif i % 100 == 0:
            time.sleep(0.002)
        send(b"%08d" % i)


def _collect(got, count, timeout):
    seen = collections.Counter()
    deadline = time.monotonic() + timeout
    while sum(seen.values()) < count and time.monotonic() < deadline:
        try:
            seen[got.get(timeout=0.2).data] += 1
        except queue.Empty:
            pass
    time.sleep(0.3)  # a late duplicate would come now
    while not got.empty():
        seen[got.get().data] += 1
    return seen


def _assert_exactly_once(seen, count):
    lost = [i for i in range(count) if seen[b"%08d" % i] == 0]
    duplicated = {k: v for k, v in seen.items() if v > 1}
    assert not lost and not duplicated, "lost %d (%s...), duplicated %d" % (len(lost), lost[:5], len(duplicated))
    assert len(seen) == count


def test_direct_link_to_java_cut_mid_stream_loses_and_duplicates_nothing(world):
    got = queue.Queue()
    with gma.Consumer(registry=world.registry, domain="east", label="resender", on_message=got.put) as c:
        pong = c._core._registry.lookup(world.pong)
        proxy = Proxy((pong["host"], int(pong["port"])))
        c._core._addresses[world.pong] = proxy.address  # this side reaches the pong through the proxy
        _stream_with_cuts(lambda d: c.send(world.pong, d), N, proxy, c._core)
        seen = _collect(got, N, 60)
        proxy.close()
        assert proxy.cuts == 4 and c.stats()["links_lost"] >= 3
    _assert_exactly_once(seen, N)


def test_uplink_cut_mid_stream_across_domains_loses_and_duplicates_nothing(world):
    got = queue.Queue()
    proxy = Proxy(_host_port(world.pc["east"]))
    with gma.Producer(registry=world.registry, domain="east", label="src", pc="127.0.0.1:%d" % proxy.port) as p, \
            gma.Consumer(registry=world.registry, domain="west", label="dst", pc=world.pc["west"],
                         on_message=got.put) as c:
        _stream_with_cuts(lambda d: p.send(c.name, d), N, proxy, p._core)
        seen = _collect(got, N, 60)
    assert proxy.connections >= 4  # the uplink, and again after each cut
    _assert_exactly_once(seen, N)


def test_python_to_python_direct_cut_mid_stream(world):
    got = queue.Queue()
    with gma.Consumer(registry=world.registry, domain="east", label="dst", on_message=got.put) as c, \
            gma.Producer(registry=world.registry, domain="east", label="src") as p:
        proxy = Proxy(("127.0.0.1", c._core.port))
        p._core._addresses[c.name] = proxy.address
        _stream_with_cuts(lambda d: p.send(c.name, d), N, proxy, p._core)
        seen = _collect(got, N, 60)
        proxy.close()
        assert proxy.connections >= 4
    _assert_exactly_once(seen, N)
