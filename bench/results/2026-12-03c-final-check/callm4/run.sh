#!/usr/bin/env bash
# Device call m4 (2026-12-03, thirteenth session): BufferID and TestGPUSharedWithoutContext as tidied after m3
# (one function, the test's steps in a loop); TestGPUSharedWithoutContext, TestGPUWindows, TestGPUAllocShared,
# TestGPUProcessesWindows/shareable twice (ranks' timeout 40 s).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03c-final-check/callm4/run.sh $o/run.sh
res() { grep -E '^(--- |    --- |        --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-600; }
env RINGO_TEST_GPUS=0,0 timeout -s QUIT 60 $g/ringo.test -test.v -test.run 'TestGPUSharedWithoutContext|TestGPUAllocShared|TestGPUWindows' > $o/shared.log 2>&1
echo "shared rc $?: $(res $o/shared.log)"
for i in 1 2; do
  env RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=40s timeout -s QUIT 60 $g/ringo.test -test.v -test.run 'TestGPUProcessesWindows/shareable' > $o/shareable-$i.log 2>&1
  echo "shareable-$i rc $?: $(res $o/shareable-$i.log)"
done
tar -C $o -czf $OUT/callm4.tgz .
