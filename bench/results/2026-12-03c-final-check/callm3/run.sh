#!/usr/bin/env bash
# Device call m3 (2026-12-03, thirteenth session): shareable memory's queries with a context current
# (SharedBounds, AllocShared, ImportShared, unmapping, ExportShared under the GPU's context; BufferID again
# under it where the thread has none). TestGPUSharedWithoutContext (new), TestGPUAllocShared, TestGPUWindows;
# TestGPUProcessesWindows/shareable six times and the whole test twice (ranks' timeout 40 s, RINGO_TIMEOUT);
# then every other TestGPU* of the root package, 2 ranks on GPU 0, in the time left.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
export RINGO_NVTX_INJECTION=$PWD/$g/libnvtx-inject.so
cp bench/results/2026-12-03c-final-check/callm3/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callm3.tgz .; }
el() { echo $(( $(date +%s) - t0 )); }
res() { grep -E '^(--- |    --- |        --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-600; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 90 $g/ringo.test -test.v -test.run 'TestGPUSharedWithoutContext|TestGPUAllocShared|TestGPUWindows' > $o/shared.log 2>&1
echo "shared rc $? ($(el) s): $(res $o/shared.log)"
for i in 1 2 3 4 5 6; do
  [ $(el) -lt 150 ] || break
  env RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=40s GOTRACEBACK=all timeout -s QUIT 100 $g/ringo.test -test.v -test.run 'TestGPUProcessesWindows/shareable' > $o/shareable-$i.log 2>&1
  echo "shareable-$i rc $? ($(el) s): $(res $o/shareable-$i.log)"
done
save
for i in 1 2; do
  [ $(el) -lt 200 ] || break
  env RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=40s GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.run 'TestGPUProcessesWindows' > $o/windows-$i.log 2>&1
  echo "windows-$i rc $? ($(el) s): $(res $o/windows-$i.log)"
done
save
left=$(( 585 - $(el) ))
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT $left $g/ringo.test -test.v -test.timeout $(( left - 5 ))s -test.run 'TestGPU' -test.skip 'TestGPUProcessesWindows|TestGPUSharedWithoutContext|TestGPUAllocShared|TestGPUWindows' > $o/gpu.log 2>&1
echo "gpu rc $? ($(el) s, limit $left): passed $(grep -c '^--- PASS' $o/gpu.log) failed $(grep -c '^--- FAIL' $o/gpu.log) skipped $(grep -c '^--- SKIP' $o/gpu.log)"
grep -E '^(--- FAIL|    --- FAIL|panic)' $o/gpu.log | head -10; grep -A4 'running tests:' $o/gpu.log | head -6
save
echo "=== total $(el) s"
