#!/usr/bin/env bash
# Device call Y (2026-12-02f): after Device.AllocZeroed replaced five hand-written allocate-and-zero
# sequences: the tests that make each region (in-process, IPC, a ring of one, the direct all-reduce's).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/y; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callY.sh $o/run.sh
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.v -test.timeout 115s -test.run 'TestGPUProcesses$|TestGPUWorldOfOne|TestGPUDirectAllReduce|TestGPUSharedGPU|TestGPUProcessesWindows/P2P' > $o/tests.log 2>&1
echo "tests rc $?: $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-600)"
tar -C $o -czf $OUT/callY.tgz .
