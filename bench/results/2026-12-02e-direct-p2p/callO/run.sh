#!/usr/bin/env bash
# Device call O (2026-12-02e): direct point-to-point with empty trailing units skipped; the tests over every GPU
# transport (processes too: the skip changes what a proxy sees), nccl-tests' p2p binaries, PyTorch p2p.py; the
# bandwidth at the default channel budget and at NCCL_MAX_P2P_NCHANNELS=64; the latency sweep; hypercube -g 4
# on the FIFO path (is its failure older than direct?).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callO.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 200 $g/ringo.test -test.v -test.timeout 195s -test.run 'TestGPUPointToPoint$|TestGPUScheduleAnyPeer|TestGPUProcessesPointToPoint|TestGPUProcessesAnyPeer|TestGPUGraphCapture|TestGPUSharedGPU' > $o/tests-2.log 2>&1
echo "tests 2 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^( *--- |ok|FAIL|panic)' $o/tests-2.log | tr '\n' ' ' | cut -c1-900)"
RINGO_TEST_GPUS=0,0,0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint$|TestGPUScheduleAnyPeer' > $o/tests-4.log 2>&1
echo "tests 4 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-4.log | tr '\n' ' ' | cut -c1-300)"
for t in sendrecv alltoall alltoallv gather scatter; do
  for n in 2 4; do
    RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g $n -b 8 -e 16M -f 8 -d all -n 3 -w 1 -c 1 > $o/nt/$t-g$n.txt 2>&1
    echo "nccl-tests $t -g $n rc $?: $(grep -E 'Out of bounds' $o/nt/$t-g$n.txt)"
  done
done
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/hypercube_perf -g 2 -b 8 -e 16M -f 8 -d all -n 3 -w 1 -c 1 > $o/nt/hypercube-g2.txt 2>&1
echo "nccl-tests hypercube -g 2 rc $?: $(grep -E 'Out of bounds' $o/nt/hypercube-g2.txt)"
NCCL_P2P_DIRECT_DISABLE=1 RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/hypercube_perf -g 4 -b 64 -e 4K -f 8 -d int32 -n 3 -w 1 -c 1 > $o/nt/hypercube-g4-fifo.txt 2>&1
echo "nccl-tests hypercube -g 4 FIFO path rc $?: $(grep -E 'Out of bounds' $o/nt/hypercube-g4-fifo.txt)"
echo "nccl-tests ($(( $(date +%s) - t0 )) s)"
source /opt/torch/.venv/bin/activate
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 120 torchrun --standalone --nproc_per_node 2 bench/pytorch/p2p.py > $o/torch/p2p-2.log 2>&1; echo "p2p.py 2 ranks rc $?: $(grep -c '^OK' $o/torch/p2p-2.log) OK, $(grep -c '^FAIL' $o/torch/p2p-2.log) FAIL"
deactivate
echo "torch ($(( $(date +%s) - t0 )) s)"
B="-coll sendrecv,alltoall,gather,scatter -b 1M -e 1G -f 4 -n 20 -w 5 -c 1"
timeout 90 $g/ringo bench --gpus 0,0 $B > $o/bw-2.txt 2>&1; echo "bw 2 rc $?"
NCCL_MAX_P2P_NCHANNELS=64 timeout 90 $g/ringo bench --gpus 0,0 $B > $o/bw-2-64.txt 2>&1; echo "bw 2 64ch rc $?"
timeout 90 $g/ringo bench --gpus 0,0,0,0 $B > $o/bw-4.txt 2>&1; echo "bw 4 rc $?"
NCCL_MAX_P2P_NCHANNELS=64 timeout 90 $g/ringo bench --gpus 0,0,0,0 $B > $o/bw-4-64.txt 2>&1; echo "bw 4 64ch rc $?"
L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
timeout 60 $g/ringo bench --gpus 0,0 $L > $o/lat-2.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 > $o/lat-4.txt 2>&1
echo "bench ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callO.tgz .
for f in bw-2 bw-2-64 bw-4 bw-4-64; do echo "--- $f (size busbw wrong, out of place)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s/%s", $1, $8, $9}'; echo; grep -m3 -iE 'error|panic|fail' $o/$f.txt | cut -c1-300; done
for f in lat-2 lat-4; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
echo "=== total $(( $(date +%s) - t0 )) s"
