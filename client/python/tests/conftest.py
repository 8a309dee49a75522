"""The Java processes the interoperation tests run beside: the registry, two PC servlets (east and west) and
``gma pong`` in east, each started with ``java -jar`` on loopback and ephemeral ports, and stopped at the end.

The jars come from the Maven build (``mvn -B -o -q install -DskipTests`` builds them). Without them these
tests are skipped, unless GMA_REQUIRE_JARS=1 (the Maven module sets it), where a missing jar fails them.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JARS = {
    "registry": os.path.join(ROOT, "registry", "target", "gma-registry.jar"),
    "pc": os.path.join(ROOT, "pcservlet", "target", "gma-pcservlet.jar"),
    "gma": os.path.join(ROOT, "examples", "target", "gma-examples.jar"),
}
JAVA_OPTS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


class JavaProcess:
    """A Java process whose output is kept, and read for lines as they come."""

    def __init__(self, what, args, cwd):
        self.what = what
        self.lines = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(["java"] + JAVA_OPTS + ["-jar", JARS[what]] + list(args), cwd=cwd,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def await_line(self, pattern, timeout=60):
        """The first match of ``pattern`` in a line of output, waiting for it."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        i = 0
        with self._cond:
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i])
                    if m:
                        return m
                    i += 1
                if self.proc.poll() is not None and i >= len(self.lines):
                    raise AssertionError("%s ended (%s) before printing /%s/:\n%s" % (
                        self.what, self.proc.returncode, pattern, "\n".join(self.lines)))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("%s printed no /%s/ within %d s:\n%s" % (
                        self.what, pattern, timeout, "\n".join(self.lines)))
                self._cond.wait(min(left, 0.5))

    def output(self):
        with self._cond:
            return "\n".join(self.lines)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Lines:
    """A process's output lines, read by a thread of its own, so that a test waits for one with a bound."""

    def __init__(self, stream):
        import queue
        self._q = queue.Queue()

        def pump():
            for line in stream:
                self._q.put(line.rstrip("\n"))
            self._q.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def next(self, timeout=30):
        import queue
        try:
            line = self._q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no line of output within %s s" % timeout) from None
        if line is None:
            raise AssertionError("the process's output ended")
        return line


def run_gma(args, timeout=60):
    """``gma ARGS`` (the examples jar) to its end: (exit status, output)."""
    p = subprocess.run(["java"] + JAVA_OPTS + ["-jar", JARS["gma"]] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout


def _need_jars():
    missing = [p for p in JARS.values() if not os.path.exists(p)]
    if missing:
        why = "jars missing (mvn -B -o -q install -DskipTests builds them): %s" % ", ".join(missing)
        if os.environ.get("GMA_REQUIRE_JARS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    if shutil.which("java") is None:
        pytest.skip("no java on the PATH")


class World:
    """The running processes and their addresses."""


@pytest.fixture(scope="session")
def world():
    _need_jars()
    tmp = tempfile.mkdtemp(prefix="gma-py-")
    started = []
    w = World()
    try:
        reg = JavaProcess("registry", ["--port", "0", "--default-lease", "30"], tmp)
        started.append(reg)
        w.registry = reg.await_line(r"GMA registry at (http://[0-9.]+:\d+)").group(1)
        pcs = {}
        for domain in ("east", "west"):
            pcs[domain] = JavaProcess("pc", ["--domain", domain, "--registry", w.registry, "--http-port", "0",
                                             "--uplink-port", "0", "--memory", "--drain-seconds", "1"], tmp)
            started.append(pcs[domain])
        w.pc = {}
        for domain, p in pcs.items():
            m = p.await_line(r"uplinks at ([0-9.]+:\d+)")
            w.pc[domain] = m.group(1)
        pong = JavaProcess("gma", ["pong", "--registry", w.registry, "--domain", "east", "--pc", w.pc["east"]], tmp)
        started.append(pong)
        pong.await_line(r"pong is pong@east")
        w.pong = "pong@east"
        w.processes = started
        yield w
    finally:
        for p in reversed(started):
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def secure_world():
    """As ``world``, with security on everywhere: the files of ``gma keys --client alice,east,west``, and alice's
    certificate and key converted to PEM (openssl) for a Python endpoint to accept links with."""
    _need_jars()
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to convert a PKCS12 store to PEM")
    tmp = tempfile.mkdtemp(prefix="gma-py-secure-")
    keys = os.path.join(tmp, "keys")
    status, out = run_gma(["keys", "--dir", keys, "--client", "alice,east,west"], timeout=120)
    assert status == 0, out
    with open(os.path.join(keys, "store.pass")) as f:
        password = f.read().strip()
    for args, out_name in ((["-nokeys", "-clcerts"], "client-alice.pem"), (["-nocerts", "-nodes"],
                                                                            "client-alice.key.pem")):
        subprocess.run(["openssl", "pkcs12", "-in", os.path.join(keys, "client-alice.p12"), "-passin",
                        "pass:" + password, "-out", os.path.join(keys, out_name)] + args, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.chmod(os.path.join(keys, out_name), 0o600)
    started = []
    w = World()
    w.keys = keys
    try:
        reg = JavaProcess("registry", ["--port", "0", "--security", keys], tmp)
        started.append(reg)
        w.registry = reg.await_line(r"GMA registry at (https://[0-9.]+:\d+)").group(1)
        pcs = {}
        for domain in ("east", "west"):
            pcs[domain] = JavaProcess("pc", ["--domain", domain, "--registry", w.registry, "--http-port", "0",
                                             "--uplink-port", "0", "--memory", "--drain-seconds", "1",
                                             "--security", keys], tmp)
            started.append(pcs[domain])
        w.pc = {d: p.await_line(r"uplinks at ([0-9.]+:\d+)").group(1) for d, p in pcs.items()}
        pong = JavaProcess("gma", ["pong", "--registry", w.registry, "--domain", "east", "--pc", w.pc["east"],
                                   "--security", keys, "--identity", "alice"], tmp)
        started.append(pong)
        pong.await_line(r"pong is pong@east")
        w.pong = "pong@east"
        yield w
    finally:
        for p in reversed(started):
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
