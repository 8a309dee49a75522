"""Runs bench/python/bench_python.py with the client package under SRC (a client/python/src of another commit)
instead of this tree's: the bench puts this tree's src first on sys.path, so the other is imported first.

    git archive main client/python/src | tar -x -C /tmp/main-client
    python3 bench/results/2026-11-27-python-rtt/bench_with.py /tmp/main-client/client/python/src
"""
import os
import runpy
import sys

src = os.path.abspath(sys.argv[1])
sys.path.insert(0, src)
import gma  # noqa: E402  (bench_python's own "import gma" finds this one)

assert gma.__file__.startswith(src), gma.__file__
print("client:", gma.__file__, flush=True)
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.argv = ["bench/python/bench_python.py"] + sys.argv[2:]
runpy.run_path(os.path.join(root, "bench", "python", "bench_python.py"), run_name="__main__")
