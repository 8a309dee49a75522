"""Round trips to one Java gma pong from three clients in one process, interleaved in blocks of 200 as the
bench interleaves two: the raw socket of bench_python.py (RawGma), main's client (imported as gma_old from
OLD_SRC) and this tree's. p50 of N round trips each after 2,000 of warm-up.

    python3 bench/results/2026-11-27-python-rtt/ab.py /tmp/main-client/client/python/src [N] [sizes...]
"""
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import bench_python as b  # noqa: E402  (puts this tree's client first: gma)

old_pkg = tempfile.mkdtemp(prefix="gma-old-")
shutil.copytree(os.path.join(sys.argv[1], "gma"), os.path.join(old_pkg, "gma_old"))  # relative imports only
sys.path.insert(0, old_pkg)
import gma  # noqa: E402
import gma_old  # noqa: E402
from gma._wire import Command  # noqa: E402

N = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
SIZES = [int(x) for x in sys.argv[3:]] or [64, 1024]


def timed(call):
    def once():
        t = time.perf_counter()
        call()
        return time.perf_counter() - t
    return once


def main():
    procs = []
    try:
        reg, m = b.start_java("registry", ["--port", "0"], r"GMA registry at (http://[0-9.]+:\d+)")
        procs.append(reg)
        pong, _ = b.start_java("gma", ["pong", "--registry", m.group(1), "--domain", "bench"], r"pong is pong@bench")
        procs.append(pong)
        target = "pong@bench"
        with gma.Consumer(registry=m.group(1), domain="bench", label="new") as new, \
                gma_old.Consumer(registry=m.group(1), domain="bench", label="old") as old:
            info = new._core._registry.lookup(target)
            for size in SIZES:
                data = bytes(size)
                raw = b.RawGma((info["host"], int(info["port"])), b._raw_name("ab"), target)
                seq = [0]

                def raw_request():
                    seq[0] += 1
                    raw.s.sendall(raw.frame(Command.REQUEST, seq[0], data, 1))
                    assert raw.read()[:2] == (Command.REPLY, seq[0])

                runs = {"raw": timed(raw_request), "old": timed(lambda: old.request(target, data)),
                        "new": timed(lambda: new.request(target, data))}
                times = {k: [] for k in runs}
                for _ in range(2000):
                    for once in runs.values():
                        once()
                while len(times["raw"]) < N:
                    for k, once in runs.items():
                        times[k].extend(once() for _ in range(200))
                raw.close()
                p50 = {k: statistics.median(v) * 1e6 for k, v in times.items()}
                print("%4d B, load %.1f: raw p50 %.1f us | main's client %.1f us (%.2fx) | this tree's %.1f us"
                      " (%.2fx)" % (size, os.getloadavg()[0], p50["raw"], p50["old"], p50["old"] / p50["raw"],
                                    p50["new"], p50["new"] / p50["raw"]), flush=True)
    finally:
        for p in reversed(procs):
            p.stop()
        shutil.rmtree(old_pkg, ignore_errors=True)


if __name__ == "__main__":
    main()
