"""Monitoring tables from a Python consumer: continuous and latest queries over Java producers of host_cpu
(tests/java/TableProducer.java, run with java on the examples jar), rows decoded and projected."""

import os
import queue
import subprocess
import threading
import time

import pytest

import gma
from conftest import JARS, JAVA_OPTS, Lines

HERE = os.path.dirname(os.path.abspath(__file__))


class JavaTableProducer:
    def __init__(self, world, site):
        self.p = subprocess.Popen(["java"] + JAVA_OPTS + ["-cp", JARS["gma"],
                                                          os.path.join(HERE, "java", "TableProducer.java"),
                                                          world.registry, "east", site],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, bufsize=1)
        self.out = Lines(self.p.stdout)
        line = self.out.next(60)
        assert line.startswith("producer is "), line
        self.name = line.split()[-1]

    def insert(self, host, load1):
        self.p.stdin.write("%s %s\n" % (host, load1))
        self.p.stdin.flush()
        assert self.out.next() == "inserted " + host

    def stop(self):
        self.p.stdin.close()
        try:
            self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


@pytest.fixture(scope="module")
def producers(world):
    made = []
    try:
        for site in ("cardiff", "lyon"):
            made.append(JavaTableProducer(world, site))
        yield made
    finally:
        for p in made:
            p.stop()


def test_continuous_query_gets_matching_rows_projected(world, producers):
    got = queue.Queue()
    cardiff, lyon = producers
    with gma.Consumer(registry=world.registry, domain="east", label="tq") as c:
        with c.continuous("SELECT host, load1 FROM host_cpu WHERE load1 > 4", got.put) as q:
            assert q.producers == {cardiff.name, lyon.name}
            cardiff.insert("node-1", 5.5)
            cardiff.insert("node-2", 0.5)   # not > 4
            lyon.insert("node-9", 7.25)
            rows = sorted([got.get(timeout=10) for _ in range(2)], key=lambda r: r.row["host"])
            assert [r.row for r in rows] == [{"host": "node-1", "load1": 5.5}, {"host": "node-9", "load1": 7.25}]
            assert [r.producer for r in rows] == [cardiff.name, lyon.name]
            assert all(abs(r.inserted_micros / 1e6 - time.time()) < 60 for r in rows)
            assert got.empty()
        lyon.insert("node-8", 9.0)  # after the close: cancelled at the producer
        time.sleep(0.5)
        assert got.empty()


def test_latest_query_keeps_the_newest_row_of_each_key(world, producers):
    cardiff, lyon = producers
    cardiff.insert("node-3", 1.0)
    cardiff.insert("node-3", 2.0)
    lyon.insert("node-4", 3.0)
    with gma.Consumer(registry=world.registry, domain="east", label="tl") as c:
        rows = c.latest("SELECT * FROM host_cpu WHERE host IN ('node-3', 'node-4')")
        assert sorted((r.row["host"], r.row["load1"], r.row["site"], r.row["up"]) for r in rows) == [
            ("node-3", 2.0, "cardiff", True), ("node-4", 3.0, "lyon", True)]
        assert list(rows[0].row) == ["site", "host", "load1", "up"]


def test_queries_are_refused_with_the_sentence(world, producers):
    with gma.Consumer(registry=world.registry, domain="east", label="tr") as c:
        with pytest.raises(gma.GmaError) as e:
            c.latest("SELECT nosuch FROM host_cpu")
        assert e.value.code == gma.ErrorCode.MALFORMED and "column nosuch is not a column of table host_cpu" in \
            e.value.sentence
        with pytest.raises(gma.GmaError) as e:
            c.latest("SELECT host FROM host_cpu WHERE load1 + 1 > 2")
        assert e.value.code == gma.ErrorCode.MALFORMED, e.value
        with pytest.raises(gma.GmaError) as e:
            c.continuous("SELECT * FROM host_mem", lambda r: None)
        assert e.value.code == gma.ErrorCode.NO_ROUTE


HOST_CPU = [("site", "STRING"), ("host", "STRING"), ("load1", "DOUBLE"), ("up", "BOOLEAN")]


def test_python_producer_answers_a_java_consumer(world, producers):
    with gma.Producer(registry=world.registry, domain="east", label="pytables") as p:
        p.declare("host_cpu", HOST_CPU, ["host"], predicate="site = 'paris'")
        p.insert("host_cpu", ["paris", "py-1", 1.5, True])
        java = subprocess.Popen(["java"] + JAVA_OPTS + ["-cp", JARS["gma"], os.path.join(HERE, "java",
                                                                                          "TableConsumer.java"),
                                 world.registry, "east", "SELECT host, load1 FROM host_cpu WHERE site = 'paris'"
                                 " AND load1 >= 2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)
        out = Lines(java.stdout)
        try:
            assert out.next(60) == "query started"
            deadline = time.monotonic() + 10
            while p.insert("host_cpu", {"site": "paris", "host": "py-2", "load1": 2.5, "up": False}) == 0:
                assert time.monotonic() < deadline, "the Java consumer's query never reached this producer"
                time.sleep(0.1)
            assert p.insert("host_cpu", ["paris", "py-3", 0.5, True]) == 0  # not >= 2
            line = out.next()
            assert line == "row %s ['py-2', 2.5]" % p.name, line
            java.stdin.write("latest SELECT * FROM host_cpu WHERE site = 'paris'\n")
            java.stdin.flush()
            assert out.next() == "latest 3"
            got = sorted(out.next() for _ in range(3))
            assert got == ["%s ['paris', 'py-%d', %s, %s]" % (p.name, i, load, up) for i, load, up in
                           ((1, "1.5", "true"), (2, "2.5", "false"), (3, "0.5", "true"))], got
            java.stdin.write("historyfrom %s SELECT host FROM host_cpu WHERE load1 > 1 ORDER BY insert_time DESC"
                             " LIMIT 1\n" % p.name)
            java.stdin.flush()
            assert out.next() == "history 1"
            assert out.next() == "%s ['py-2']" % p.name  # the last inserted of those over 1
            java.stdin.write("latest SELECT nosuch FROM host_cpu\n")
            java.stdin.flush()
            assert out.next().startswith("failed "), "a bad column is refused"
        finally:
            java.stdin.close()
            try:
                java.wait(20)
            except subprocess.TimeoutExpired:
                java.kill()
                java.wait()
        with pytest.raises(ValueError):
            p.insert("host_cpu", ["lyon", "py-4", 1.0, True])  # outside the predicate
        with pytest.raises(ValueError):
            p.insert("host_cpu", ["paris", None, 1.0, True])  # NULL in the key


def test_python_producer_and_consumer_together(world, producers):
    got = queue.Queue()
    with gma.Producer(registry=world.registry, domain="east", label="pyt2") as p, \
            gma.Consumer(registry=world.registry, domain="east", label="pyc2") as c:
        p.declare("host_cpu", HOST_CPU, ["host"], predicate="site = 'oslo'")
        with c.continuous("SELECT * FROM host_cpu WHERE site = 'oslo' AND host LIKE 'o-%'", got.put) as q:
            assert p.name in q.producers
            assert p.insert("host_cpu", ["oslo", "o-1", 3.0, True]) == 1
            assert p.insert("host_cpu", ["oslo", "x-1", 3.0, True]) == 0
            r = got.get(timeout=10)
            assert (r.producer, r.row) == (p.name, {"site": "oslo", "host": "o-1", "load1": 3.0, "up": True})
        rows = c.latest("SELECT host FROM host_cpu WHERE site = 'oslo'")
        assert sorted(r.row["host"] for r in rows) == ["o-1", "x-1"]


def test_another_declaration_of_a_table_is_forbidden(world, producers):
    with gma.Producer(registry=world.registry, domain="east", label="pyt3") as p:
        with pytest.raises(gma.GmaError) as e:
            p.declare("host_cpu", [("site", "STRING"), ("host", "STRING")], ["host"])
        assert e.value.code == gma.ErrorCode.FORBIDDEN
        assert "column load1" in e.value.sentence, e.value.sentence


def test_a_query_a_python_producer_cannot_evaluate_is_answered_not_its_link_closed(world, producers):
    # a literal Python's decimals overflow on: the producer answers ERROR MALFORMED naming it, and its link
    # to the consumer goes on (before, the exception closed the link, and the query went unanswered)
    with gma.Producer(registry=world.registry, domain="east", label="pyt4") as p, \
            gma.Consumer(registry=world.registry, domain="east", label="pyc4") as c:
        p.declare("py_eval", HOST_CPU, ["host"])
        with pytest.raises(gma.GmaError) as e:
            c.latest("SELECT host FROM py_eval WHERE load1 = -1e1000000")
        assert e.value.code == gma.ErrorCode.MALFORMED, e.value
        assert p.name + " answered" in e.value.sentence, e.value.sentence
        p.insert("py_eval", ["bergen", "b-1", 1.0, True])
        rows = c.latest("SELECT host FROM py_eval")
        assert [r.row["host"] for r in rows] == ["b-1"]


def test_a_query_id_used_again_for_another_table_replaces_the_first(world, producers):
    # a consumer restarted under its name numbers its queries afresh: its query 1 of py_b replaces its query 1
    # of py_a at the producer, whose rows would otherwise reach the new query
    from gma import _rows
    from gma._wire import Command
    with gma.Producer(registry=world.registry, domain="east", label="pyt5") as p, \
            gma.Consumer(registry=world.registry, domain="east", label="pyc5") as c:
        p.declare("py_a", HOST_CPU, ["host"])
        p.declare("py_b", HOST_CPU, ["host"])
        for table in ("py_a", "py_b"):
            c._core.request(p.name, _rows.varint(1) + ("SELECT * FROM %s" % table).encode(), 10,
                            command=Command.TABLE_QUERY)
        assert p.insert("py_a", ["x", "a-1", 1.0, True]) == 0
        assert p.insert("py_b", ["x", "b-1", 1.0, True]) == 1


def test_a_producer_that_lost_a_query_is_asked_for_it_again(world, producers):
    # the producer loses the query (as after a restart under its name, registered throughout): the consumer,
    # hearing nothing of it for REASSERT_SECONDS, asks it again, and rows flow again
    got = queue.Queue()
    with gma.Producer(registry=world.registry, domain="east", label="pyt6") as p, \
            gma.Consumer(registry=world.registry, domain="east", label="pyc6") as c:
        p.declare("py_lost", HOST_CPU, ["host"])
        with c.continuous("SELECT host FROM py_lost", got.put):
            assert p.insert("py_lost", ["x", "h-0", 1.0, True]) == 1
            assert got.get(timeout=10).row == {"host": "h-0"}
            table = p._core.published._tables["py_lost"]
            with table.lock:
                table.queries.clear()
            deadline = time.monotonic() + 40
            i = 0
            while got.empty() and time.monotonic() < deadline:
                i += 1
                p.insert("py_lost", ["x", "h-%d" % i, 1.0, True])
                time.sleep(0.2)
            assert not got.empty(), "no row after the producer lost the query came in 40 s"
