#!/usr/bin/env bash
# Device call j1 (2026-12-03, tenth session): why TestGPUHierarchical/groups_of_2 (4 ranks of one process on
# one H200) hangs. Runs of 40 s (the test's sweep deadline), each a variant: as is (one with RINGO_TRACE),
# without direct all-reduces, with 8 channels; then TestGPUNVTX with its recorder.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj1.sh $o/run.sh
run() { # name, env...
  local n=$1; shift; t0=$(date +%s)
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=40s GOTRACEBACK=all "$@" timeout -s QUIT 50 $g/ringo.test -test.v -test.timeout 46s -test.run 'TestGPUHierarchical' > $o/$n.log 2>&1
  echo "$n rc $? ($(( $(date +%s) - t0 )) s) [$*]: $(grep -E '^(--- |    --- )' $o/$n.log | tr '\n' ' ')"
}
run asis1 RINGO_TRACE=$o/trace1.json
run asis2
run nodirect1 RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=0
run nodirect2 RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=0
run ch8 NCCL_MAX_NCHANNELS=8
env RINGO_TEST_GPUS=0,0 RINGO_NVTX_INJECTION=$PWD/$g/libnvtx-inject.so timeout 60 $g/ringo.test -test.v -test.run 'TestGPUNVTX' > $o/nvtx.log 2>&1
echo "nvtx rc $?: $(grep -E '^(--- |    --- )' $o/nvtx.log | tr '\n' ' ')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar -C $o -czf $OUT/callj1.tgz .
