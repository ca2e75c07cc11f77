#!/usr/bin/env bash
# Device call h6 (2026-12-02h): a window whose buffer was freed and made again is staged, not read
# (TestGPUProcessesWindows, 4 processes), and the windows' other tests.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh6.sh $o/run.sh
t0=$(date +%s)
el() { echo "($(( $(date +%s) - t0 )) s)"; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 240 $g/ringo.test -test.v -test.timeout 235s -test.run 'TestGPUProcessesWindows|TestGPUWindows' > $o/windows.log 2>&1
echo "windows rc $? $(el): $(grep -E '^(--- |    --- |ok|FAIL|panic)' $o/windows.log | tr '\n' ' ' | cut -c1-900)"
grep -h "same address" $o/windows.log | head -3
tar -C $o -czf $OUT/callh6.tgz .
