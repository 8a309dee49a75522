"""The Python client's benchmark (issue 25): Python-to-Java round trip at 64 B and 1 KB, and streaming of 64 B
and 1 KB messages, beside a raw Python socket doing the same in the same run (GMA by hand, struct and
sendall, against the same Java pong), and beside nats-py when it is importable (against nats-server, with a
nats-py responder in another process).

    python3 bench/python/bench_python.py [--quick] [--out bench/RESULTS.md]

It starts a Java registry and ``gma pong`` (the jars of ``mvn -B -o -q install -DskipTests``), and nats-server
when it is on the PATH. The goals: round trip within 1.5x of the raw socket; streaming at 50% or more of its
messages/s.
"""

import argparse
import asyncio
import os
import platform
import queue
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python", "src"))
sys.path.insert(0, os.path.join(ROOT, "client", "python", "tests"))

import gma  # noqa: E402
from gma import _wire  # noqa: E402
from gma._wire import Command  # noqa: E402

JAVA = ["java", "-Xms512m", "-Xmx512m", "-jar"]


def start_java(jar, args, pattern):
    from conftest import JavaProcess, JARS
    p = JavaProcess(jar, args, tempfile.gettempdir())
    p.proc.args  # noqa: B018
    return p, p.await_line(pattern)


# ---------------------------------------------------------------------- measurements

def percentile(sorted_values, p):
    return sorted_values[max(0, int(-(-p * len(sorted_values) // 1)) - 1)]


def rtt_stats(times):
    s = sorted(times)
    return {"p50": percentile(s, .5) * 1e6, "p99": percentile(s, .99) * 1e6, "mean": sum(s) / len(s) * 1e6}


def round_trips(c, address, target, size, n, warm, block=200):
    """GMA's and the raw socket's round trips, interleaved in blocks of ``block`` so that both see the same
    moments of the machine's load: (GMA's times, raw's times)."""
    data = bytes(size)
    r = RawGma(address, _raw_name("rtt"), target)
    seq = [0]

    def raw_once():
        seq[0] += 1
        t = time.perf_counter()
        r.s.sendall(r.frame(Command.REQUEST, seq[0], data, 1))
        cmd, got, _ = r.read()
        took = time.perf_counter() - t
        assert cmd == Command.REPLY and got == seq[0]
        return took

    def gma_once():
        t = time.perf_counter()
        c.request(target, data)
        return time.perf_counter() - t

    for _ in range(warm):
        raw_once()
        gma_once()
    g, w = [], []
    while len(g) < n:
        for _ in range(block):
            w.append(raw_once())
        for _ in range(block):
            g.append(gma_once())
    r.close()
    return rtt_stats(g), rtt_stats(w)


STREAM_COMMAND = 0x50  # an application command: the pong takes it (counts and acknowledges it), echoes nothing


def gma_stream(c, target, size, n):
    """Messages/s from the first send until the pong acknowledged the last (one way: Python to Java)."""
    data = bytes(size)
    t = time.perf_counter()
    for _ in range(n - 1):
        c.send(target, data, command=STREAM_COMMAND)
    c.send(target, data, command=STREAM_COMMAND).acknowledged(120)
    return n / (time.perf_counter() - t)


class RawGma:
    """GMA by hand on a plain socket: HELLO, then frames packed with struct and written with sendall, the
    replies read and acknowledged every 64, as a careful hand-written client would."""

    HEADER = struct.Struct(">2sBBBBBBQI")

    def __init__(self, address, name, pong):
        self.s = socket.create_connection(address)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.name = name.encode()
        self.pong = pong.encode()
        self.buf = bytearray()
        self.chunk = bytearray(262144)  # read into, as the GMA client does: no allocation a read
        self.received = 0
        self.lock = threading.Lock()
        self.s.sendall(_wire.pack(0, Command.HELLO, name, "", b""))
        m = self.read()
        assert m[0] == Command.WELCOME, m

    def frame(self, command, seq, data, flags=0):
        return self.HEADER.pack(b"GM", 1, command, flags, len(self.name), len(self.pong), 0, seq,
                                len(data)) + self.name + self.pong + data

    def read(self):
        """The next message as (command, sequence, data length); acknowledges every 64 counted ones."""
        while True:
            while len(self.buf) >= 20:
                _, _, cmd, _, f, t, _, seq, d = self.HEADER.unpack_from(self.buf)
                total = 20 + f + t + d
                if len(self.buf) < total:
                    break
                del self.buf[:total]
                if cmd in (Command.ACK, Command.PING, Command.PONG):
                    continue
                if cmd not in (Command.WELCOME, Command.HELLO):
                    self.received += 1
                    if self.received % 64 == 0:
                        with self.lock:  # the writer thread writes too: whole frames only
                            self.s.sendall(self.frame(Command.ACK, 0, struct.pack(">Q", self.received)))
                return cmd, seq, d
            n = self.s.recv_into(self.chunk)
            if not n:
                raise EOFError()
            self.buf += memoryview(self.chunk)[:n]

    def close(self):
        try:
            self.s.sendall(self.frame(Command.BYE, 0, b""))
        except OSError:
            pass
        self.s.close()


_RUNS = [0]


def _raw_name(what):
    _RUNS[0] += 1
    return "raw-%s%d@bench" % (what, _RUNS[0])


def raw_round_trip(address, target, size, n, warm):
    r = RawGma(address, _raw_name("rtt"), target)
    data = bytes(size)
    seq = 0
    times = []
    for i in range(warm + n):
        seq += 1
        t = time.perf_counter()
        r.s.sendall(r.frame(Command.REQUEST, seq, data, 1))
        cmd, got, _ = r.read()
        assert cmd == Command.REPLY and got == seq
        if i >= warm:
            times.append(time.perf_counter() - t)
    r.close()
    return rtt_stats(times)


def raw_stream(address, target, size, n):
    """As gma_stream, by hand: a writer thread sends the frames, this thread reads the pong's ACKs until one
    covers the last."""
    r = RawGma(address, _raw_name("stream"), target)
    data = bytes(size)
    r.s.sendall(r.frame(Command.REQUEST, 1, data, 1))
    r.read()

    def writer():
        for seq in range(2, n + 2):
            f = r.frame(STREAM_COMMAND, seq, data)
            with r.lock:
                r.s.sendall(f)

    t = time.perf_counter()
    w = threading.Thread(target=writer)
    w.start()
    acked = 0
    while acked < n + 1:  # the request, then the n messages
        while len(r.buf) < 28:
            k = r.s.recv_into(r.chunk)
            if not k:
                raise EOFError()
            r.buf += memoryview(r.chunk)[:k]
        _, _, cmd, _, f, tl, _, _, d = r.HEADER.unpack_from(r.buf)
        total = 20 + f + tl + d
        while len(r.buf) < total:
            k = r.s.recv_into(r.chunk)
            r.buf += memoryview(r.chunk)[:k]
        if cmd == Command.ACK:
            acked = struct.unpack_from(">Q", r.buf, 20 + f + tl)[0]
        del r.buf[:total]
    rate = n / (time.perf_counter() - t)
    w.join()
    r.close()
    return rate


# ---------------------------------------------------------------------- nats-py

NATS_RESPONDER = """
import asyncio, sys
import nats
async def main():
    nc = await nats.connect(sys.argv[1])
    async def echo(m):
        await nc.publish(m.reply, m.data) if m.reply else None
    async def back(m):
        await nc.publish("back", m.data)
    await nc.subscribe("echo", cb=echo)
    await nc.subscribe("stream", cb=back)
    await nc.flush()
    print("ready", flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


def nats_bench(url, sizes, n_rtt, warm, n_stream):
    import nats

    async def run():
        out = {}
        nc = await nats.connect(url)
        for size in sizes:
            data = bytes(size)
            for _ in range(warm):
                await nc.request("echo", data, timeout=5)
            times = []
            for _ in range(n_rtt):
                t = time.perf_counter()
                await nc.request("echo", data, timeout=5)
                times.append(time.perf_counter() - t)
            got = asyncio.Event()
            count = [0]

            async def cb(m):
                count[0] += 1
                if count[0] == n_stream:
                    got.set()

            sub = await nc.subscribe("back", cb=cb)
            await nc.flush()
            t = time.perf_counter()
            for _ in range(n_stream):
                await nc.publish("stream", data)
            await asyncio.wait_for(got.wait(), 120)
            rate = n_stream / (time.perf_counter() - t)
            await sub.unsubscribe()
            out[size] = (rtt_stats(times), rate)
        await nc.close()
        return out

    return asyncio.run(run())


# ---------------------------------------------------------------------- the run

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer round trips and messages")
    ap.add_argument("--out", help="a markdown file to append the results to (bench/RESULTS.md)")
    args = ap.parse_args()
    n_rtt, warm, n_stream = (2000, 500, 20000) if args.quick else (10000, 2000, 100000)
    sizes = (64, 1024)
    procs = []
    try:
        reg, m = start_java("registry", ["--port", "0"], r"GMA registry at (http://[0-9.]+:\d+)")
        procs.append(reg)
        registry = m.group(1)
        pong, _ = start_java("gma", ["pong", "--registry", registry, "--domain", "bench"], r"pong is pong@bench")
        procs.append(pong)
        target = "pong@bench"
        results = {}
        with gma.Consumer(registry=registry, domain="bench", label="rtt") as c:
            info = c._core._registry.lookup(target)
            address = (info["host"], int(info["port"]))
            for size in sizes:
                g, raw = round_trips(c, address, target, size, n_rtt, warm)
                s_raw = max(raw_stream(address, target, size, n_stream), raw_stream(address, target, size, n_stream))
                s_gma = max(gma_stream(c, target, size, n_stream), gma_stream(c, target, size, n_stream))
                results[size] = (g, raw, s_gma, s_raw)
                print("size %d: rtt gma %s raw %s; stream gma %.0f raw %.0f msgs/s" % (size, g, raw, s_gma, s_raw),
                      flush=True)
        nats = None
        server = shutil.which("nats-server") or ("/usr/sbin/nats-server" if os.path.exists("/usr/sbin/nats-server")
                                                 else None)
        try:
            import nats as _nats  # noqa: F401
            have_nats = server is not None
        except ImportError:
            have_nats = False
        if have_nats:
            port = _free_port()
            ns = subprocess.Popen([server, "-a", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            url = "nats://127.0.0.1:%d" % port
            resp = subprocess.Popen([sys.executable, "-c", NATS_RESPONDER, url], stdout=subprocess.PIPE, text=True,
                                    env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            try:
                resp.stdout.readline()
                nats = nats_bench(url, sizes, n_rtt, warm, n_stream)
                for size, (r, s) in nats.items():
                    print("size %d: nats-py rtt %s stream %.0f msgs/s" % (size, r, s), flush=True)
            finally:
                resp.kill()
                ns.kill()
        report = render(results, nats, args, n_rtt, n_stream)
        print(report)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write("\n" + report)
    except BaseException:
        for p in procs:
            print(p.output()[-3000:], file=sys.stderr)
        raise
    finally:
        for p in reversed(procs):
            p.stop()


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def render(results, nats, args, n_rtt, n_stream):
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    lines = ["## Python client (issue 25), %s UTC" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "",
             "Command: `python3 bench/python/bench_python.py%s`; Python %s, %s; %d cores; load average %.2f when"
             " it began. One Java `gma pong` (JDK, default JIT) answers everything; %d round trips after a"
             " warm-up, %d messages streamed (each the better of two runs)."
             % (" --quick" if args.quick else "", platform.python_version(), platform.platform(), os.cpu_count(),
                load, n_rtt, n_stream), "",
             "- GMA: `gma.Consumer.request` to the Java pong; streaming: `send` of an application command"
             " (0x50, which the pong takes and does not answer), timed from the first send until the pong's ACK"
             " of the last.",
             "- raw socket: the same GMA frames by hand (struct, `sendall` of each; a read loop that ACKs every"
             " 64), to the same pong, interleaved with GMA's in blocks of 200 round trips; streaming from a writer"
             " thread, timed until the pong's ACK covers the last.",
             "- nats-py: `request` and `publish` through nats-server, a nats-py responder in another process"
             " (no Java there).", "",
             "| bytes | round trip p50 / p99 (us): GMA | raw socket | GMA / raw (goal <= 1.5) | nats-py |"
             " streaming msgs/s: GMA | raw socket | GMA / raw (goal >= 0.5) | nats-py |",
             "|---|---|---|---|---|---|---|---|---|"]
    for size, (g, raw, s_gma, s_raw) in results.items():
        nr = ns = "-"
        if nats and size in nats:
            r, s = nats[size]
            nr, ns = "%.0f / %.0f" % (r["p50"], r["p99"]), "%.0f" % s
        lines.append("| %d | %.0f / %.0f | %.0f / %.0f | %.2fx | %s | %.0f | %.0f | %.2f | %s |" % (
            size, g["p50"], g["p99"], raw["p50"], raw["p99"], g["p50"] / raw["p50"], nr, s_gma, s_raw,
            s_gma / s_raw, ns))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
