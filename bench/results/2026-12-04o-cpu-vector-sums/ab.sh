#!/usr/bin/env bash
# A (d3a7fc7, scalar sums) against B (the vector sums), ringo bench, 2 processes over shared memory, own
# buffers and windows (-R), three interleaved rounds; /tmp/ringo-a and /tmp/ringo-b built from each tree.
for round in 1 2 3; do for v in a b; do for R in "" "-R"; do
  echo "### $v $R round $round" >> ab-bench.txt
  timeout 120 /tmp/ringo-$v bench --ranks 2 -b 1K -e 16M -f 4 -n 20 -w 5 -c 0 $R 2>/dev/null | grep -v '^#' >> ab-bench.txt
done; done; done
