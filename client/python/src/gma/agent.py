"""``python -m gma.agent``: the grid monitoring agent in Python, as ``gma agent`` is in Java. A producer
registered with attributes ``role=agent`` and ``host``, that samples this machine every interval and publishes
one message a round to its subscribers, one line a metric, in the Java agent's format::

    host=cardiff-node1 metric=load1 value=0.420 unit= at=1795180800123
    host=cardiff-node1 metric=cpu value=12.500 unit=% at=1795180800123

The metrics: load1, cpu, memory.used, disk.free, net.in and net.out. From the standard library (os, shutil,
/proc on Linux), or from psutil when it is installed; a metric the platform does not offer is left out.

    python -m gma.agent --registry http://127.0.0.1:8080 --domain lan --interval 5000
"""

import logging
import os
import shutil
import socket
import sys
import threading
import time

import gma

from . import _cli

try:  # optional: more platforms, and the same numbers where /proc is missing
    import psutil
except ImportError:  # pragma: no cover - depends on the machine
    psutil = None


class HostMetrics:
    """Samples this machine: a list of (metric, value, unit). CPU and network rates are over the time since
    the previous sample (the first round has no network rates)."""

    def __init__(self, proc="/proc"):
        self._proc = proc
        self._cpu = None
        self._net = None

    def sample(self):
        out = []
        try:
            out.append(("load1", os.getloadavg()[0], ""))
        except (OSError, AttributeError):
            pass
        cpu = self._cpu_percent()
        if cpu is not None:
            out.append(("cpu", cpu, "%"))
        mem = self._memory_used()
        if mem is not None:
            out.append(("memory.used", mem, "%"))
        try:
            out.append(("disk.free", shutil.disk_usage("/").free / (1024.0 ** 3), "GiB"))
        except OSError:
            pass
        out.extend(self._network())
        return out

    def _cpu_percent(self):
        if psutil is not None:
            return psutil.cpu_percent(interval=None)
        try:
            with open(os.path.join(self._proc, "stat")) as f:
                fields = f.readline().split()
        except OSError:
            return None
        if not fields or fields[0] != "cpu":
            return None
        values = [int(v) for v in fields[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        total = sum(values[:8])
        last, self._cpu = self._cpu, (total - idle, total)
        if last is None or total == last[1]:
            return 100.0 * (total - idle) / total if total else None
        return 100.0 * max(0, (total - idle) - last[0]) / (total - last[1])

    def _memory_used(self):
        if psutil is not None:
            return psutil.virtual_memory().percent
        try:
            info = {}
            with open(os.path.join(self._proc, "meminfo")) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k] = int(v.split()[0])
            return 100.0 * (info["MemTotal"] - info["MemAvailable"]) / info["MemTotal"]
        except (OSError, KeyError, ValueError, ZeroDivisionError):
            return None

    def _network(self):
        rx = tx = None
        if psutil is not None:
            c = psutil.net_io_counters(pernic=True)
            rx = sum(v.bytes_recv for k, v in c.items() if k != "lo")
            tx = sum(v.bytes_sent for k, v in c.items() if k != "lo")
        else:
            try:
                rx = tx = 0
                with open(os.path.join(self._proc, "net", "dev")) as f:
                    for line in f:
                        name, colon, rest = line.partition(":")
                        if not colon or name.strip() == "lo":
                            continue
                        v = rest.split()
                        rx += int(v[0])
                        tx += int(v[8])
            except (OSError, ValueError, IndexError):
                return []
        now = time.monotonic()
        last, self._net = self._net, (now, rx, tx)
        if last is None or now <= last[0]:
            return []
        seconds = now - last[0]
        return [("net.in", max(0, rx - last[1]) / seconds, "B/s"), ("net.out", max(0, tx - last[2]) / seconds,
                                                                     "B/s")]


class Agent:
    """A producer that publishes this machine's metrics every ``interval`` seconds until closed."""

    def __init__(self, registry, domain, pc=None, host=None, interval=5.0, security=None, **kw):
        self.host = host or socket.gethostname() or "localhost"
        self.producer = gma.Producer(registry=registry, domain=domain, label="agent", pc=pc, security=security,
                                     attributes={"role": "agent", "host": self.host}, **kw)
        self.metrics = HostMetrics()
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gma-agent-" + self.host, daemon=True)
        self._thread.start()

    @property
    def name(self):
        return self.producer.name

    def sample_text(self):
        at = int(time.time() * 1000)
        return "".join("host=%s metric=%s value=%.3f unit=%s at=%d\n" % (self.host, m, v, u, at)
                       for m, v, u in self.metrics.sample())

    def _run(self):
        while not self._stop.is_set():
            try:
                self.producer.publish(self.sample_text().encode("utf-8"))
            except Exception as e:  # one failed round must not end the rounds that follow
                logging.getLogger("gma").warning("%s: a sample round failed: %r", self.host, e)
            self._stop.wait(self._interval)

    def close(self):
        self._stop.set()
        self.producer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv=None):
    parser = _cli.endpoint_parser("python -m gma.agent", "A host-metrics agent: publishes this machine's load,"
                                  " CPU, memory, disk and network to its subscribers every interval, until"
                                  " Ctrl-C (or --duration).")
    parser.add_argument("--host", help="the host name it reports (default this machine's)")
    parser.add_argument("--interval", type=int, default=5000, metavar="MILLIS",
                        help="milliseconds between samples (default %(default)s)")
    parser.add_argument("--duration", type=float, default=0, metavar="SECONDS",
                        help="stop after this many seconds; 0 runs until Ctrl-C")
    args = parser.parse_args(argv)
    if args.interval < 1:
        parser.error("--interval %d is under 1" % args.interval)
    try:
        agent = Agent(args.registry, args.domain, args.pc, args.host, args.interval / 1000.0, _cli.security(args))
    except (gma.GmaError, ValueError, OSError) as e:
        return _cli.fail("agent", e)
    with agent:
        print("agent %s reports host %s every %d ms" % (agent.name, agent.host, args.interval), flush=True)
        _cli.until_stopped(args.duration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
