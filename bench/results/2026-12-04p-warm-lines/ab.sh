#!/bin/bash
# ab.sh ROUNDS BIN... : interleaved ringo bench rounds, out-of-place times
R=$1; shift
for r in $(seq 1 $R); do for b in "$@"; do
  /tmp/ringo-$b bench --ranks 2 -b 16 -e 2048 -f 2 -n 20000 -w 500 -c 0 2>&1 | grep -v '^#' | awk -v b=$b -v r=$r '{print b, r, $1, $6, $10}'
done; done
