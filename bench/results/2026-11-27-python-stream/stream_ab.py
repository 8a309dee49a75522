"""Streaming to one Java gma pong from three senders in one process, alternated pass by pass so that each sees
the same moments of the machine's load: the raw socket of bench_python.py (raw_stream: a writer thread,
``sendall`` of each frame), the client under OLD_SRC (imported as gma_old) and this tree's. Each run streams
N messages of an application command (bench_python's gma_stream: from the first send until the pong's ACK of
the last); the ratio is each client's messages/s over the raw socket's in the same pass.

    git archive <base> client/python/src | tar -x -C /tmp/base-client
    python3 bench/results/2026-11-27-python-stream/stream_ab.py /tmp/base-client/client/python/src \
        [--passes 6] [--n 50000] [--sizes 64,1024]

OLD_SRC "-" leaves the old client out (this tree's against the raw socket only).
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import bench_python as b  # noqa: E402  (puts this tree's client first: gma)
import gma  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old_src")
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--sizes", default="64,1024")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    old_pkg = None
    gma_old = None
    if args.old_src != "-":
        old_pkg = tempfile.mkdtemp(prefix="gma-old-")
        shutil.copytree(os.path.join(args.old_src, "gma"), os.path.join(old_pkg, "gma_old"))  # relative imports
        sys.path.insert(0, old_pkg)
        import gma_old  # noqa: F811
    procs = []
    try:
        reg, m = b.start_java("registry", ["--port", "0"], r"GMA registry at (http://[0-9.]+:\d+)")
        procs.append(reg)
        pong, _ = b.start_java("gma", ["pong", "--registry", m.group(1), "--domain", "bench"], r"pong is pong@bench")
        procs.append(pong)
        target = "pong@bench"
        clients = {"new": gma.Consumer(registry=m.group(1), domain="bench", label="new")}
        if gma_old is not None:
            clients["old"] = gma_old.Consumer(registry=m.group(1), domain="bench", label="old")
        try:
            info = clients["new"]._core._registry.lookup(target)
            address = (info["host"], int(info["port"]))
            for c in clients.values():  # links open, warmed
                c.request(target, b"warm", timeout=30)
                b.gma_stream(c, target, 64, 5000)
            b.raw_stream(address, target, 64, 5000)
            ratios = {(k, s): [] for k in clients for s in sizes}
            print("client: %s%s" % (gma.__file__, "" if gma_old is None else "; old: %s (%s)"
                                    % (gma_old.__file__, args.old_src)), flush=True)
            for p in range(1, args.passes + 1):
                for size in sizes:
                    order = ["raw"] + (sorted(clients, reverse=True) if p % 2 else sorted(clients))
                    rates = {}
                    for k in order:
                        if k == "raw":
                            rates[k] = b.raw_stream(address, target, size, args.n)
                        else:
                            rates[k] = b.gma_stream(clients[k], target, size, args.n)
                    line = "pass %d, %4d B, load %5.2f: raw %7.0f msgs/s" % (p, size, os.getloadavg()[0],
                                                                               rates["raw"])
                    for k in sorted(clients, reverse=True):
                        ratios[(k, size)].append(rates[k] / rates["raw"])
                        line += " | %s %7.0f (%.2f)" % (k, rates[k], rates[k] / rates["raw"])
                    print(line, flush=True)
            for size in sizes:
                print("%4d B median ratio over %d passes: %s" % (size, args.passes, ", ".join(
                    "%s %.2f (%.2f-%.2f)" % (k, statistics.median(ratios[(k, size)]), min(ratios[(k, size)]),
                                             max(ratios[(k, size)])) for k in sorted(clients, reverse=True))),
                      flush=True)
        finally:
            for c in clients.values():
                c.close()
    finally:
        for p in reversed(procs):
            p.stop()
        if old_pkg:
            shutil.rmtree(old_pkg, ignore_errors=True)


if __name__ == "__main__":
    main()
