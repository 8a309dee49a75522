"""CPU a streamed message: the process's and the sending thread's (time.process_time, time.thread_time) over
N messages of SIZE bytes to one Java gma pong (bench_python's gma_stream), then the raw socket's
(raw_stream) in the same process, with the client under SRC (a client/python/src; default this tree's).

    python3 bench/results/2026-11-27-python-stream/cpu.py [SRC] [--n 200000] [--size 64] [--runs 3]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("src", nargs="?")
ap.add_argument("--n", type=int, default=200000)
ap.add_argument("--size", type=int, default=64)
ap.add_argument("--runs", type=int, default=3)
args = ap.parse_args()
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import bench_python as b  # noqa: E402

if args.src:
    sys.path.insert(0, os.path.abspath(args.src))
    for m in [m for m in sys.modules if m == "gma" or m.startswith("gma.")]:
        del sys.modules[m]
import gma  # noqa: E402

print("client:", gma.__file__, flush=True)
procs = []
try:
    reg, m = b.start_java("registry", ["--port", "0"], r"GMA registry at (http://[0-9.]+:\d+)")
    procs.append(reg)
    pong, _ = b.start_java("gma", ["pong", "--registry", m.group(1), "--domain", "bench"], r"pong is pong@bench")
    procs.append(pong)
    target = "pong@bench"
    with gma.Consumer(registry=m.group(1), domain="bench", label="cpu") as c:
        c.request(target, b"warm", timeout=30)
        b.gma_stream(c, target, args.size, 20000)
        info = c._core._registry.lookup(target)
        address = (info["host"], int(info["port"]))
        n = args.n
        for run in range(args.runs):
            p0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
            rate = b.gma_stream(c, target, args.size, n)
            p1, t1, w1 = time.process_time(), time.thread_time(), time.perf_counter()
            raw = b.raw_stream(address, target, args.size, n)
            p2, w2 = time.process_time(), time.perf_counter()
            print("run %d, %d B, load %.2f: GMA %.0f msgs/s, CPU a message %.2f us (the sending thread %.2f us);"
                  " raw %.0f msgs/s, CPU a message %.2f us; ratio %.2f" % (
                      run + 1, args.size, os.getloadavg()[0], rate, (p1 - p0) / n * 1e6, (t1 - t0) / n * 1e6, raw,
                      (p2 - p1) / n * 1e6, rate / raw), flush=True)
finally:
    for p in reversed(procs):
        p.stop()
