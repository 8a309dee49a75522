"""The send path alone, without a socket: Producer.send of SIZE bytes into a queue whose link only takes and
acknowledges (no writing, no threads), for the client under OLD_SRC (imported as gma_old) and this tree's,
alternated 40 times in one process; CPU a message (time.thread_time) of the sends, and of the ACK that passes
them.

    python3 bench/results/2026-11-27-python-stream/send_path.py /tmp/base-client/client/python/src [SIZE]
"""
import importlib
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "client", "python", "src"))
old_pkg = tempfile.mkdtemp(prefix="gma-old-")
shutil.copytree(os.path.join(sys.argv[1], "gma"), os.path.join(old_pkg, "gma_old"))  # relative imports only
sys.path.insert(0, old_pkg)
import gma  # noqa: E402
import gma_old  # noqa: E402


class FakeLink:
    _writer_idle = False
    _closed = False

    def kick(self):
        pass

    def flush(self):
        pass


def build(pkg):
    """A producer's send, without a registry or a socket: its core made by hand, one peer, a fake link."""
    endpoint = importlib.import_module(pkg.__name__ + "._endpoint")
    queue = importlib.import_module(pkg.__name__ + "._queue")
    core = endpoint.EndpointCore.__new__(endpoint.EndpointCore)
    core._closed = False
    core._peers = {}
    core._lock = threading.Lock()
    core.max_queued_bytes = 8 << 20
    core.max_queued_messages = 65536
    core._name_bytes = b"prod-aaaaaa@bench"
    core.name = "prod-aaaaaa@bench"
    core.domain = "bench"
    core._uplink = None
    core._seq = itertools.count(1)
    core.counters = endpoint.Counters()
    core.policy = queue.BLOCK
    core.block_timeout = 10.0
    peer = core._named("pong@bench")
    link = FakeLink()
    peer.queue.attach(link)
    p = pkg.Producer.__new__(pkg.Producer)
    p._core = core
    return p.send, peer.queue, link


def main():
    data = bytes(int(sys.argv[2]) if len(sys.argv) > 2 else 64)
    n = min(20000, (4 << 20) // (len(data) + 40))  # within the queue's 8 MiB
    sends = {"old": [], "new": []}
    acks = {"old": [], "new": []}
    envs = {"old": build(gma_old), "new": build(gma)}
    for rep in range(40):
        for k in (("old", "new") if rep % 2 else ("new", "old")):
            send, q, link = envs[k]
            t = time.thread_time()
            for _ in range(n):
                send("pong@bench", data, 0x50)
            sends[k].append((time.thread_time() - t) / n * 1e6)
            taken = len(q.take(link))
            t = time.thread_time()
            q.acknowledge(link, taken)
            acks[k].append((time.thread_time() - t) / n * 1e6)
    for k in ("old", "new"):
        print("%s: send min %.2f median %.2f us a message; its ACK min %.2f median %.2f us a message"
              % (k, min(sends[k]), statistics.median(sends[k]), min(acks[k]), statistics.median(acks[k])))
    shutil.rmtree(old_pkg, ignore_errors=True)


if __name__ == "__main__":
    main()
