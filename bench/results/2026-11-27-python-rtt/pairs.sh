#!/bin/bash
# Alternates the bench with main's client (OLD_SRC, as bench_with.py says) and with this tree's, PAIRS times,
# the old first in each pair; prints each run's table rows with the time and the load average.
#   OLD_SRC=/tmp/main-client/client/python/src PAIRS=5 bench/results/2026-11-27-python-rtt/pairs.sh
cd "$(dirname "$0")/../../.." || exit 1
for i in $(seq 1 "${PAIRS:-5}"); do
  for w in old new; do
    echo "=== pair $i $w $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ $w = old ]; then
      python3 bench/results/2026-11-27-python-rtt/bench_with.py "$OLD_SRC" 2>&1 | grep "^| 64 \|^| 1024 "
    else
      python3 bench/python/bench_python.py 2>&1 | grep "^| 64 \|^| 1024 "
    fi
  done
done
