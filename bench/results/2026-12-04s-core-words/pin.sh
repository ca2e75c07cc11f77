#!/bin/bash
# pin.sh BIN PLACEMENT: placement like "0011" = core of rank 0..3; "-" = unpinned
B=$1; P=$2
$B bench --ranks 4 -b 64 -e 64 -n 60000 -w 20000 -c 0 > /tmp/pin.out 2>&1 &
bp=$!
sleep 0.25
if [ "$P" != "-" ]; then
  kids=$(pgrep -P $bp | sort -n)
  i=0; for k in $kids; do taskset -a -p -c ${P:$i:1} $k >/dev/null; i=$((i+1)); done
fi
wait $bp
awk '$1 ~ /^[0-9]+$/ {print $6}' /tmp/pin.out
