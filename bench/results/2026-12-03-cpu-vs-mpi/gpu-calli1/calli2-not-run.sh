#!/usr/bin/env bash
# Device call i2 (2026-12-03): TestGPUHierarchical/groups_of_2 (4 ranks of one process on one H200), which hung in
# call i1: five separate runs, 50 s each, to tell a regression from the one-GPU hangs seen before; then TestGPUNVTX
# with its recorder (call i1 left RINGO_NVTX_INJECTION unset).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/calli2.sh $o/run.sh
for i in 1 2 3 4 5; do
  t0=$(date +%s)
  env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 50 $g/ringo.test -test.v -test.timeout 48s -test.run 'TestGPUHierarchical' > $o/hier$i.log 2>&1
  echo "run $i rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |    --- )' $o/hier$i.log | tr '\n' ' ')"
done
env RINGO_TEST_GPUS=0,0 RINGO_NVTX_INJECTION=$PWD/$g/libnvtx-inject.so timeout 60 $g/ringo.test -test.v -test.run 'TestGPUNVTX' > $o/nvtx.log 2>&1
echo "nvtx rc $?: $(grep -E '^(--- |    --- )' $o/nvtx.log | tr '\n' ' ')"
tar -C $o -czf $OUT/calli2.tgz .
