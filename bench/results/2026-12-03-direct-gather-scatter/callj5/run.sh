#!/usr/bin/env bash
# Device call j5 (2026-12-03): after two shots' first half and the reduce-scatter came to share one device
# function (reduceShare) in direct.cu: the direct all-reduce (one and two shots), reduce-scatter and all-gather
# tests, and processes over CUDA IPC.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj5.sh $o/run.sh
t0=$(date +%s)
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1500; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 230 $g/ringo.test -test.v -test.timeout 225s \
  -test.run 'TestGPUDirectAllReduce|TestGPUDirectGatherScatter|TestGPUProcessesWindows|TestGPUAbsentRank' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(res $o/tests.log)"
for t in all_reduce reduce_scatter all_gather; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 2 -b 8 -e 8M -f 8 -c 1 -d all -o all -n 2 -w 1 > $o/nt/$t.out 2>&1
  echo "$t -d all -o all rc $? $(el): $(grep -E 'Out of bounds' $o/nt/$t.out | tr '\n' ' ')"
done
tar -C $o -czf $OUT/callj5.tgz .
