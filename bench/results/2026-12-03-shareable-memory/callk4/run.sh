#!/usr/bin/env bash
# Device call k4 (2026-12-03): how many hardware queues do streams get? graph_replays --gap S puts S unused
# streams between the two ranks' streams; with streams given queues in turn, the ranks share one (and hang)
# when S+1 is a multiple of the queues' number. CUDA_DEVICE_MAX_CONNECTIONS=32 (as ringo sets it), then 8.
o=/tmp/o; mkdir -p $o; t0=$(date +%s)
cp build/callk4.sh $o/run.sh
for q in 32 8; do
  for S in $(seq 0 34); do
    [ $q = 8 ] && [ $S -gt 17 ] && break
    f=$o/q$q-gap$S.log
    CUDA_DEVICE_MAX_CONNECTIONS=$q timeout -k 1 15 build/repro/graph_replays --trials 3 --timeout 2 --max-hangs 1 --check 0 --gap $S > $f 2>&1
    echo "q$q gap $S rc $?: $(grep -o 'hangs=[0-9]*' $f) ($(( $(date +%s) - t0 )) s)"
  done
done | tee $o/summary.txt | awk '{printf "%s ", $0} END{print ""}' | sed 's/ rc 0//g'
tar -C $o -czf $OUT/callk4.tgz .
