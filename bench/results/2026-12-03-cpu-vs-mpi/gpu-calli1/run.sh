#!/usr/bin/env bash
# Device call i1 (2026-12-03): the GPU tests of the root package after the host-side changes of issue 25
# (the Waiter's lazy deadline, which GPU waits share; the collectives' path choice), 2 and 4 ranks on one H200.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/calli1.sh $o/run.sh
t0=$(date +%s)
el() { echo "($(( $(date +%s) - t0 )) s)"; }
nvidia-smi -L > $o/info.txt 2>&1
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 420 $g/ringo.test -test.v -test.timeout 415s -test.run 'TestGPU' > $o/gpu.log 2>&1
echo "gpu rc $? $(el)"
grep -E '^(--- FAIL|    --- FAIL|FAIL|panic|ok)' $o/gpu.log | head -20
echo "passed: $(grep -c '^--- PASS' $o/gpu.log)  failed: $(grep -c '^--- FAIL' $o/gpu.log)  skipped: $(grep -c '^--- SKIP' $o/gpu.log)"
grep -E '^--- (PASS|FAIL)' $o/gpu.log | awk '{print $2, $3, $4}' | tr '\n' ' ' | cut -c1-3000
tar -C $o -czf $OUT/calli1.tgz .
