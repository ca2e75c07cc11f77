#!/usr/bin/env bash
# Issue 20, last: self copies over every channel, sequential launches of kept plans.
o=$1; mkdir -p $o; g=build/gpu
export RINGO_TEST_GPUS=0,0
timeout 100 $g/ringo.test -test.v -test.timeout 90s -test.run 'TestGPU(PointToPoint|ProcessesPointToPoint)$' > $o/tests.log 2>&1
grep -E '^(--- |PASS|FAIL|ok|panic)' $o/tests.log
timeout 60 $g/ringo.test -test.run '^$' -test.bench GPUEnqueue -test.benchtime 3000x > $o/enqueue.txt 2>&1; grep -E 'Benchmark|FAIL|Error' $o/enqueue.txt
B="-b 8 -e 1G -f 4 -n 20 -w 5 -c 1"
timeout 100 $g/ringo bench --gpus 0,0 -coll sendrecv,alltoall,gather,scatter $B > $o/p2p-2.txt 2>&1
timeout 120 $g/ringo bench --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter $B > $o/p2p-4.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 40 $g/sendrecv_perf -g 2 -b 8 -e 1G -f 4 -n 20 -w 5 -c 1 > $o/nt-sr-g2.txt 2>&1
timeout 150 $g/run.sh $o/pt p2p-tests > $o/p2p-tests.txt 2>&1; cat $o/p2p-tests.txt
echo "=== (size, time us, busbw GB/s, #wrong; out of place)"
for f in p2p-2 p2p-4 nt-sr-g2; do echo "--- $f"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{print; next} {printf "%12s %9s %9s %6s\n", $1, $6, $8, $9}'; grep -E 'Out of' $o/$f.txt | head -2; done
