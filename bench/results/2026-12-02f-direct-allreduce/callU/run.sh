#!/usr/bin/env bash
# Device call U (2026-12-02f): direct all-reduces between processes (staging buffers mapped over CUDA IPC,
# windows read in place), windows in the Go API, the C ABI (ncclCommWindowRegister, nccl-tests -R 1/-R 2)
# and ringo bench -R; latency beside the ring for ranks of one process (nccl-tests -g 2) and for processes.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/bench $o/nt $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callU.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 280 $g/ringo.test -test.v -test.timeout 275s -test.run 'TestGPUDirectAllReduce|TestGPUWindows|TestGPUProcessesWindows|TestGPUProcesses$|TestGPUAbsentRank|TestGPUGraphCapture|TestGPUProcessKilled|TestGPUKernels|TestGPUSharedGPU' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-900)"
timeout 60 $g/capi.test -test.run 'TestGPU' > $o/capi.log 2>&1; echo "capi rc $?: $(tail -1 $o/capi.log)"
nt() { # name env... -- flags
  local name=$1; shift
  env NCCL_DEBUG=WARN RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib "$@" > $o/nt/$name.txt 2>&1
  echo "nt $name: rc $? wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/nt/$name.txt) $(grep -m1 'Avg bus' $o/nt/$name.txt)"
}
A="-g 2 -b 8 -e 1M -f 2 -n 200 -w 50"
nt ar-ring RINGO_DIRECT_MAX=0 timeout 60 $g/all_reduce_perf $A
nt ar-direct X=1 timeout 60 $g/all_reduce_perf $A
nt ar-R1 X=1 timeout 60 $g/all_reduce_perf $A -R 1
nt ar-R2 X=1 timeout 60 $g/all_reduce_perf $A -R 2
nt ar-ring-G RINGO_DIRECT_MAX=0 timeout 60 $g/all_reduce_perf $A -G 10
nt ar-direct-G X=1 timeout 60 $g/all_reduce_perf $A -G 10
nt ar-check-R2 X=1 timeout 90 $g/all_reduce_perf -g 2 -b 8 -e 1M -f 8 -d all -o all -n 2 -w 1 -c 1 -R 2
echo "nccl-tests ($(( $(date +%s) - t0 )) s)"
L="-coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 1"
pb() { local name=$1 gpus=$2; shift 2
  env "$@" timeout 90 $g/ringo bench --gpus $gpus -procs $L $EXTRA > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/bench/$name.out)"
}
for n in 2 4; do
  gp=0,0; [ $n = 4 ] && gp=0,0,0,0
  EXTRA= pb procs-ring-$n $gp RINGO_DIRECT_MAX=0
  EXTRA= pb procs-staged-$n $gp X=1
  EXTRA=-R pb procs-window-$n $gp X=1
done
EXTRA="-R -G 10" pb procs-window-2-G 0,0 X=1
EXTRA="-G 10" pb procs-ring-2-G 0,0 RINGO_DIRECT_MAX=0
echo "procs ($(( $(date +%s) - t0 )) s)"
source /opt/torch/.venv/bin/activate
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 120 torchrun --standalone --nproc_per_node 2 bench/pytorch/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL"
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 120 torchrun --standalone --nproc_per_node 4 bench/pytorch/collectives.py > $o/torch/collectives-4.log 2>&1; echo "collectives.py 4 rc $?: $(grep -c '^OK' $o/torch/collectives-4.log) OK, $(grep -c '^FAIL' $o/torch/collectives-4.log) FAIL"
tar -C $o -czf $OUT/callU.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1.out; }
nto() { awk '/^ +[0-9]+ /{print $6}' $o/nt/$1.txt; }
echo "size | nccl-tests -g2 (us, oop): ring direct R1 R2 ringG directG | procs2: ring staged window ringG windowG | procs4: ring staged window"
paste <(awk '/^ +[0-9]+ /{print $1}' $o/nt/ar-ring.txt) <(nto ar-ring) <(nto ar-direct) <(nto ar-R1) <(nto ar-R2) <(nto ar-ring-G) <(nto ar-direct-G) <(t procs-ring-2) <(t procs-staged-2) <(t procs-window-2) <(t procs-ring-2-G) <(t procs-window-2-G) <(t procs-ring-4) <(t procs-staged-4) <(t procs-window-4)
