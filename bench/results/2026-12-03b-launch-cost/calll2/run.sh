#!/usr/bin/env bash
# Device call l2 (2026-12-03, twelfth session): the bundle with send/recv's host path allocation-free.
# Checks: TestGPUPointToPoint, TestGPUDirectGatherScatter, TestGPUStreams, TestGPUSharedGPU (2 ranks on GPU 0);
# nccl-tests sendrecv -g 2 and alltoall -g 4, every type; PyTorch p2p.py, 2 processes. Then the host side:
# BenchmarkGPUEnqueue with a memory profile; latency, 2 ranks, without the launch order (3 runs) and with it
# (1 run); kernel traces of send/recv and all-reduce at 128 KiB without the order.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/trace $o/torch; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03b-launch-cost/calll2/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calll2.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-600; }
RINGO_TEST_GPUS=0,0 timeout 200 $g/ringo.test -test.run 'TestGPUPointToPoint|TestGPUDirectGatherScatter|TestGPUStreams|TestGPUSharedGPU' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(res $o/tests.log)"
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/sendrecv_perf -g 2 -b 8 -e 16M -f 8 -d all -n 5 -w 1 -c 1 > $o/nt-sendrecv.txt 2>&1
echo "sendrecv_perf rc $? $(el): $(grep -E 'wrong' $o/nt-sendrecv.txt | tail -2 | tr '\n' ' ')"
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/alltoall_perf -g 4 -b 64 -e 16M -f 8 -d all -n 5 -w 1 -c 1 > $o/nt-alltoall.txt 2>&1
echo "alltoall_perf rc $? $(el): $(grep -E 'wrong' $o/nt-alltoall.txt | tail -2 | tr '\n' ' ')"
( source /opt/torch/.venv/bin/activate
  LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 120 torchrun --standalone --nproc_per_node 2 bench/pytorch/p2p.py > $o/torch/p2p-2.log 2>&1
  echo "p2p.py 2 ranks rc $? $(el): $(grep -c '^OK' $o/torch/p2p-2.log) OK, $(grep -c '^FAIL' $o/torch/p2p-2.log) FAIL" )
save
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 20000x \
  -test.benchmem -test.memprofile $o/enqueue.memprof -test.memprofilerate 1 > $o/bench-enqueue.txt 2>&1; echo "benchmarks rc $? $(el)"
for k in 1 2 3; do
  RINGO_LAUNCH_ORDER=0 timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 256K -f 4 -n 200 -w 50 -c 0 > $o/lat-order0-$k.out 2>&1
done
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 256K -f 4 -n 200 -w 50 -c 0 > $o/lat-order1-1.out 2>&1
for c in sendrecv all_reduce; do
  RINGO_LAUNCH_ORDER=0 RINGO_TRACE=$o/trace/$c-128k.json timeout 60 $g/ringo bench --gpus 0,0 -coll $c -b 128K -e 128K -n 100 -w 20 -c 0 > $o/trace/$c-128k.txt 2>&1
  RINGO_LAUNCH_ORDER=0 RINGO_TRACE=$o/trace/$c-8.json timeout 60 $g/ringo bench --gpus 0,0 -coll $c -b 8 -e 8 -n 100 -w 20 -c 0 > $o/trace/$c-8.txt 2>&1
done
echo "traces $(el): $(ls -s $o/trace | tr '\n' ' ')"
save
echo "=== total $(el)"
grep -E '^Benchmark' $o/bench-enqueue.txt
for f in $o/lat-*.out; do echo "== $(basename $f .out)"; grep -vE "^#" $f | grep -E '^ +[0-9]' | awk '{print $1, $4, $6, $10}' | tr '\n' ';'; echo; done
