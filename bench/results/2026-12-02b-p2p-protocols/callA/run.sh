#!/usr/bin/env bash
# Device call A (issue 20): per-message protocol in ringo_p2p — tests, latency and bandwidth, nccl-tests.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/p2pA.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 260 $g/ringo.test -test.v -test.timeout 250s -test.run 'TestGPU' > $o/tests.log 2>&1
echo "tests rc $? passed $(grep -c '^--- PASS' $o/tests.log) ($(( $(date +%s) - t0 )) s)"; grep -E '^(--- FAIL|FAIL|panic)' $o/tests.log | head
RINGO_TEST_GPUS=0,0,0,0 timeout 90 $g/ringo.test -test.v -test.timeout 80s -test.run 'TestGPU(PointToPoint|ProcessesPointToPoint)$' > $o/tests4.log 2>&1
echo "4-rank p2p tests rc $?"; grep -E '^(--- |FAIL|panic)' $o/tests4.log | head
timeout 60 $g/ringo.test -test.run '^$' -test.bench GPUEnqueue -test.benchtime 3000x > $o/enqueue.txt 2>&1; grep -E '^Benchmark|FAIL' $o/enqueue.txt
S="-b 8 -e 64K -f 2 -n 200 -w 50 -c 1"
L="-b 1M -e 512M -f 4 -n 20 -w 5 -c 1"
{ timeout 100 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv,alltoall $S
  NCCL_P2P_LL_THRESHOLD=0 timeout 100 $g/ringo bench --gpus 0,0 -coll sendrecv,alltoall $S; } > $o/small-2.txt 2>&1
{ timeout 100 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall $S
  NCCL_P2P_LL_THRESHOLD=0 timeout 100 $g/ringo bench --gpus 0,0,0,0 -coll sendrecv,alltoall $S; } > $o/small-4.txt 2>&1
timeout 100 $g/ringo bench --gpus 0,0 -coll sendrecv,alltoall,gather,scatter $L > $o/large-2.txt 2>&1
timeout 120 $g/ringo bench --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter $L > $o/large-4.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 40 $g/sendrecv_perf -g 2 -b 8 -e 64K -f 2 -n 200 -w 50 -c 1 > $o/nt-sr-g2.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 40 $g/all_reduce_perf -g 2 -b 8 -e 64K -f 2 -n 200 -w 50 -c 1 > $o/nt-ar-g2.txt 2>&1
timeout 200 $g/run.sh $o/pt p2p-tests > $o/p2p-tests.txt 2>&1; cat $o/p2p-tests.txt | grep -v "^==="
tar -C $o -czf $OUT/p2pA.tgz .
echo "=== (size, time us, busbw GB/s, #wrong; out of place)  total $(( $(date +%s) - t0 )) s"
for f in small-2 small-4 large-2 large-4 nt-sr-g2 nt-ar-g2; do echo "--- $f"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{print; next} {printf "%10s %8s %8s %3s\n", $1, $6, $8, $9}'; done
