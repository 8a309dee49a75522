#!/bin/bash
# 20 alternated pairs of Loops direct: base (b3af4a8) and head
for i in $(seq 1 20); do
  if [ $((i % 2)) -eq 1 ]; then order="base head"; else order="head base"; fi
  for v in $order; do
    r=$(java -Xms1g -Xmx1g -cp /tmp/$v.jar io.gma.bench.loops.Loops direct 2>/dev/null | tail -1)
    echo "$i $v $r $(cut -d' ' -f1 /proc/loadavg)"
  done
done
