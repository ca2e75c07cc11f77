#!/usr/bin/env bash
# Device call N (2026-12-02e): direct point-to-point between ranks of one process (a send writes into its
# receiver's output at the address the receiver posts): the GPU tests over it (2 and 4 ranks sharing GPU 0),
# nccl-tests' point-to-point binaries on every datatype, the bandwidth beside the FIFO path
# (NCCL_P2P_DIRECT_DISABLE=1) and the copy; TestGPUProcessesShrink over every GPU transport (issue 21).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callN.sh $o/run.sh
t0=$(date +%s)
T='TestGPUPointToPoint$|TestGPUScheduleAnyPeer|TestGPUGraphCapture|TestGPUSharedGPU|TestGPUBadInput|TestGPUWorldOfOne|TestGPUAllCollectives'
RINGO_TEST_GPUS=0,0 timeout 150 $g/ringo.test -test.v -test.timeout 145s -test.run "$T" > $o/tests-2.log 2>&1
echo "tests 2 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-2.log | tr '\n' ' ' | cut -c1-600)"
RINGO_TEST_GPUS=0,0,0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint$|TestGPUScheduleAnyPeer' > $o/tests-4.log 2>&1
echo "tests 4 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-4.log | tr '\n' ' ' | cut -c1-400)"
RINGO_TEST_GPUS=0,0 timeout 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPUProcessesShrink' > $o/shrink.log 2>&1
echo "shrink rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^( *--- |ok|FAIL|panic)|survivor' $o/shrink.log | tr '\n' ' ' | cut -c1-500)"
for t in sendrecv alltoall alltoallv gather scatter hypercube; do
  for n in 2 4; do
    RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g $n -b 8 -e 16M -f 8 -d all -n 3 -w 1 -c 1 > $o/nt/$t-g$n.txt 2>&1
    echo "nccl-tests $t -g $n rc $?: $(grep -E 'Out of bounds' $o/nt/$t-g$n.txt) $(grep -m2 -iE 'warn|error' $o/nt/$t-g$n.txt | cut -c1-200 | tr '\n' ' ')"
  done
done
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/sendrecv_perf -g 2 -b 8 -e 16M -f 8 -d all -n 3 -w 1 -c 1 -G 3 > $o/nt/sendrecv-G.txt 2>&1
echo "nccl-tests sendrecv -G 3 rc $?: $(grep -E 'Out of bounds' $o/nt/sendrecv-G.txt)"
echo "nccl-tests ($(( $(date +%s) - t0 )) s)"
B="-coll sendrecv,alltoall,gather,scatter -b 8 -e 1G -f 4 -n 20 -w 5 -c 1"
timeout 90 $g/ringo bench --gpus 0,0 $B > $o/bw-2.txt 2>&1; echo "bw 2 rc $?"
NCCL_P2P_DIRECT_DISABLE=1 timeout 90 $g/ringo bench --gpus 0,0 $B > $o/bw-2-fifo.txt 2>&1; echo "bw 2 fifo rc $?"
timeout 90 $g/ringo bench --gpus 0,0,0,0 $B > $o/bw-4.txt 2>&1; echo "bw 4 rc $?"
timeout 40 $g/ringo bench --gpus 0 -coll sendrecv -b 64M -e 1G -f 4 -n 20 -w 5 > $o/copy.txt 2>&1; echo "copy rc $?"
L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
timeout 60 $g/ringo bench --gpus 0,0 $L > $o/lat-2.txt 2>&1
NCCL_P2P_DIRECT_DISABLE=1 timeout 60 $g/ringo bench --gpus 0,0 -coll sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 > $o/lat-2-fifo.txt 2>&1
echo "bench ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callN.tgz .
for f in bw-2 bw-2-fifo bw-4 copy; do echo "--- $f (size busbw wrong, out of place)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} $1>=1048576 {printf " %s/%s/%s", $1, $8, $9}'; echo; grep -m3 -iE 'error|panic|fail' $o/$f.txt | cut -c1-300; done
for f in lat-2 lat-2-fifo; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
echo "=== total $(( $(date +%s) - t0 )) s"
