#!/usr/bin/env bash
# Device call m2 (2026-12-03, thirteenth session), 4c27907's bundle as m1: call m1's suite ran out of its 395 s
# inside TestGPUProcessesWindows/shareable/P2P (15 s in; 4 s before). That subtest five times with the ranks'
# timeout at 40 s (RINGO_TIMEOUT: a stalled rank reports and exits), the whole test twice; capi's cuda-tagged
# tests and gpu_smoke.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03c-final-check/callm2/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callm2.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |        --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-700; }
for i in 1 2 3 4 5; do
  env RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=40s GOTRACEBACK=all timeout -s QUIT 100 $g/ringo.test -test.v -test.run 'TestGPUProcessesWindows/shareable' > $o/shareable-$i.log 2>&1
  echo "shareable-$i rc $? $(el): $(res $o/shareable-$i.log)"
done
save
for i in 1 2; do
  env RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=40s GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.run 'TestGPUProcessesWindows' > $o/windows-$i.log 2>&1
  echo "windows-$i rc $? $(el): $(res $o/windows-$i.log)"
done
save
(cd capi && RINGO_TEST_GPUS=0,0 timeout 150 ../$g/capi.test -test.v -test.timeout 140s > $o/capi.log 2>&1); echo "capi.test rc $? $(el): $(grep -c -- '--- PASS' $o/capi.log) passed; $(grep -E '^(--- FAIL|FAIL|panic)' $o/capi.log | head -5 | tr '\n' ' ')"
timeout 60 $g/lib/gpu_smoke > $o/gpu_smoke.log 2>&1; echo "gpu_smoke rc $?: $(tail -1 $o/gpu_smoke.log)"
save
echo "=== total $(el)"
