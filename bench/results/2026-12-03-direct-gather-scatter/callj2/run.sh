#!/usr/bin/env bash
# Device call j2 (2026-12-03): TestGPUHierarchical/groups_of_2 hung 2 of 2 in call j1 as is, passed 2 of 2 without
# direct all-reduces. Is it hardware-queue aliasing (streams beyond CUDA_DEVICE_MAX_CONNECTIONS share a queue)?
# Three runs as is, three with 32 queues, alternated.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj2.sh $o/run.sh
run() { # name, env...
  local n=$1; shift; t0=$(date +%s)
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=30s "$@" timeout -s QUIT 40 $g/ringo.test -test.v -test.timeout 36s -test.run 'TestGPUHierarchical/groups_of_2' > $o/$n.log 2>&1
  echo "$n rc $? ($(( $(date +%s) - t0 )) s) [$*]: $(grep -E '^(--- |    --- )' $o/$n.log | tr '\n' ' ')"
}
for i in 1 2 3; do
  run asis$i
  run q32-$i CUDA_DEVICE_MAX_CONNECTIONS=32
done
tar -C $o -czf $OUT/callj2.tgz .
