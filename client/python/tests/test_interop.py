"""Python and Java endpoints together: the real registry, PC servlets and gma pong, started with java -jar."""

import queue
import threading

import gma
from conftest import Lines, run_gma


def test_python_requests_java_pong_in_one_domain(world):
    with gma.Consumer(registry=world.registry, domain="east", label="ping") as c:
        for size in (0, 64, 1024, 70000):
            data = bytes(i % 251 for i in range(size))
            assert c.request(world.pong, data, timeout=10) == data


def test_python_data_is_echoed_by_java_pong(world):
    got = queue.Queue()
    with gma.Consumer(registry=world.registry, domain="east", label="ping", on_message=got.put) as c:
        sent = [c.send(world.pong, b"n=%d" % i) for i in range(100)]
        for s in sent:
            s.acknowledged(10)
        echoes = [got.get(timeout=10) for _ in range(100)]
        assert [e.data for e in echoes] == [b"n=%d" % i for i in range(100)]
        assert all(e.sender == world.pong and e.command == gma.Command.DATA for e in echoes)


def test_python_requests_java_pong_across_domains(world):
    with gma.Consumer(registry=world.registry, domain="west", label="ping", pc=world.pc["west"]) as c:
        assert c.request(world.pong, b"over the tunnel", timeout=15) == b"over the tunnel"


def _python_pong(world, domain, label, pc=None):
    holder = {}

    def on_message(m):
        if m.reply_expected:
            m.reply(m.data)
        elif m.command == gma.Command.DATA:
            holder["p"].send(m.sender, m.data)

    p = gma.Producer(registry=world.registry, domain=domain, label=label, exact=True, pc=pc, on_message=on_message)
    holder["p"] = p
    return p


def test_java_ping_answered_by_python_pong_in_one_domain(world):
    with _python_pong(world, "east", "pypong1"):
        status, out = run_gma(["ping", "pypong1@east", "--registry", world.registry, "--domain", "east",
                               "-c", "5", "-i", "0"])
        assert status == 0, out
        assert "5 transmitted, 5 received, 0% loss" in out, out
        status, out = run_gma(["ping", "pypong1@east", "--registry", world.registry, "--domain", "east",
                               "-c", "3", "-i", "0", "--nonblocking", "-s", "1000"])
        assert status == 0, out
        assert "3 transmitted, 3 received, 0% loss" in out, out


def test_java_ping_answered_by_python_pong_across_domains(world):
    with _python_pong(world, "east", "pypong2", pc=world.pc["east"]):
        status, out = run_gma(["ping", "pypong2@east", "--registry", world.registry, "--domain", "west",
                               "--pc", world.pc["west"], "-c", "3", "-i", "0"])
        assert status == 0, out
        assert "3 transmitted, 3 received, 0% loss" in out, out


def test_query_sees_python_and_java_endpoints(world):
    with gma.Producer(registry=world.registry, domain="east", label="cpu", attributes={"site": "cardiff"}) as p:
        names = [r["name"] for r in p.query("SELECT name FROM endpoints WHERE domain = 'east'")]
        assert p.name in names and world.pong in names
        rows = p.query("SELECT value FROM attributes WHERE name = '%s' AND key = 'site'" % p.name).rows
        assert rows == [["cardiff"]]
        try:
            p.query("DELETE FROM endpoints")
            raise AssertionError("no error")
        except gma.GmaError as e:
            assert e.code in (gma.ErrorCode.INTERNAL, gma.ErrorCode.FORBIDDEN)


def test_publish_subscribe_across_domains(world):
    got = queue.Queue()
    with gma.Producer(registry=world.registry, domain="east", label="cpu", pc=world.pc["east"]) as p, \
            gma.Consumer(registry=world.registry, domain="west", label="sink", pc=world.pc["west"],
                         on_message=got.put) as c:
        c.subscribe(p.name, "all").acknowledged(10)
        deadline = threading.Event()
        for _ in range(200):
            if p.subscribers:
                break
            deadline.wait(0.05)
        assert p.subscribers == {c.name: "all"}
        for i in range(10):
            p.publish(b"load=%d" % i)
        assert [got.get(timeout=10).data for _ in range(10)] == [b"load=%d" % i for i in range(10)]
        c.unsubscribe(p.name)
        for _ in range(200):
            if not p.subscribers:
                break
            deadline.wait(0.05)
        assert p.subscribers == {}


def _python_module(module, *args, timeout=60):
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    p = subprocess.run([sys.executable, "-m", module] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout


def test_python_ping_command_against_java_pong_across_domains(world):
    status, out = _python_module("gma.ping", world.pong, "--registry", world.registry, "--domain", "west",
                                 "--pc", world.pc["west"], "-c", "3", "-i", "0")
    assert status == 0, out
    assert out.startswith("PING pong@east: 64 data bytes\n"), out
    assert "3 transmitted, 3 received, 0% loss" in out, out
    assert "rtt p50/p90/p99 = " in out, out


def test_python_pong_command_answers_java_ping(world):
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    pong = subprocess.Popen([sys.executable, "-m", "gma.pong", "--registry", world.registry, "--domain", "east",
                             "--label", "pycmd", "--pc", world.pc["east"]], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert Lines(pong.stdout).next(30) == "pong is pycmd@east"
        for args in (["--domain", "east"], ["--domain", "west", "--pc", world.pc["west"], "--nonblocking"]):
            status, out = run_gma(["ping", "pycmd@east", "--registry", world.registry, "-c", "3", "-i", "0"]
                                  + args)
            assert status == 0, out
            assert "3 transmitted, 3 received, 0% loss" in out, out
    finally:
        pong.terminate()
        try:
            assert pong.wait(10) == 0
        except subprocess.TimeoutExpired:
            pong.kill()
            pong.wait()
            raise
    status, out = _python_module("gma.ping", "pycmd@east", "--registry", world.registry, "--domain", "east",
                                 "-c", "1", "-W", "1")
    assert status == 1
    assert "1 transmitted, 0 received, 100% loss" in out, out


def test_java_sub_receives_the_python_agent(world):
    from gma.agent import Agent
    with Agent(world.registry, "east", host="pyhost", interval=0.2) as agent:
        status, out = run_gma(["sub", agent.name, "--registry", world.registry, "--domain", "east",
                               "--duration", "4"])
        assert status == 0, out
        lines = [l for l in out.splitlines() if l.startswith("host=pyhost metric=")]
        assert any(" metric=load1 " in l for l in lines), out
        assert any(" metric=memory.used " in l and " unit=% " in l for l in lines), out
        rows = agent.producer.query("SELECT key, value FROM attributes WHERE name = '%s' ORDER BY key"
                                    % agent.name).rows
        assert rows == [["host", "pyhost"], ["role", "agent"]]


def test_agent_samples_this_machine():
    from gma.agent import HostMetrics
    h = HostMetrics()
    h.sample()
    import time
    time.sleep(0.05)
    got = {m: (v, u) for m, v, u in h.sample()}
    assert "cpu" in got and 0 <= got["cpu"][0] <= 100 and got["cpu"][1] == "%"
    assert "net.in" in got and got["net.in"][1] == "B/s"
