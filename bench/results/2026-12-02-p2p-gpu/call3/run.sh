#!/usr/bin/env bash
# Issue 20's GPU measurements on one H200 (ranks sharing GPU 0): the p2p
# tests, host-side enqueue cost, ringo bench of the p2p collectives beside a
# one-rank copy (the GPU's copy bandwidth) and all-reduce, nccl-tests.
o=$1; mkdir -p $o; g=build/gpu
export RINGO_TEST_GPUS=0,0
timeout 150 $g/ringo.test -test.v -test.timeout 140s -test.run 'TestGPU(PointToPoint|ProcessesPointToPoint|AllCollectives|Kernels|Bidirectional)$' > $o/tests.log 2>&1
grep -E '^(--- |PASS|FAIL|ok|panic)' $o/tests.log
timeout 60 $g/ringo.test -test.run '^$' -test.bench GPUEnqueue -test.benchtime 3000x > $o/enqueue.txt 2>&1; grep -E 'Benchmark|FAIL|Error' $o/enqueue.txt
B="-b 8 -e 1G -f 4 -n 20 -w 5 -c 1"
timeout 60 $g/ringo bench --gpus 0 -coll sendrecv $B > $o/copy-1rank.txt 2>&1
timeout 120 $g/ringo bench --gpus 0,0 -coll sendrecv,alltoall,gather,scatter $B > $o/p2p-2.txt 2>&1
timeout 150 $g/ringo bench --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter $B > $o/p2p-4.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce -b 8 -e 1M -f 4 -n 50 -w 10 -c 0 > $o/ar-2.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce -b 8 -e 1M -f 4 -n 50 -w 10 -c 0 > $o/ar-4.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 40 $g/all_reduce_perf -g 2 -b 8 -e 1M -f 4 -n 50 -w 10 -c 0 > $o/nt-ar-g2.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/sendrecv_perf -g 2 -b 8 -e 1G -f 4 -n 20 -w 5 -c 1 > $o/nt-sr-g2.txt 2>&1
timeout 300 $g/run.sh $o/pt p2p-tests > $o/p2p-tests.txt 2>&1; cat $o/p2p-tests.txt
echo "=== ringo bench (time us / busbw GB/s, out of place; #wrong)"
for f in copy-1rank p2p-2 p2p-4 ar-2 ar-4; do echo "--- $f"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{print; next} {printf "%12s %9s %9s %6s\n", $1, $6, $8, $9}'; grep -E 'Out of|rror' $o/$f.txt | head -3; done
echo "--- nccl-tests -g 2 on GPU 0 (size, time, busbw, wrong)"
for f in nt-ar-g2 nt-sr-g2; do echo "- $f"; grep -E '^ +[0-9]+ ' $o/$f.txt | awk '{printf "%12s %9s %9s %6s\n", $1, $6, $8, $9}'; done
