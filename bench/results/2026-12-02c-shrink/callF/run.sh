#!/usr/bin/env bash
# Device call F (2026-12-02c): Config.StopGrace (a C ABI rank's kernels stop once the loss is read) —
# TestGPUProcessStopGrace, the shrink-and-grow job on the seeds that failed, then every TestGPU* (kernels.Grid).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/shrink; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callF.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUProcessStopGrace$' > $o/stopgrace.log 2>&1
echo "StopGrace rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/stopgrace.log | tr '\n' ' ')"
source /opt/torch/.venv/bin/activate
for s in 3 4 2 7; do
  CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$PWD/$g/lib/libnccl.so.2" timeout 60 python3 bench/pytorch/shrink.py --timeout 45 --seed $s --steps 100 > $o/shrink/seed$s.log 2>&1
  echo "seed $s rc $? | $(grep -h ': caught' $o/shrink/seed$s.log | cut -c1-22 | tr '\n' ' ')| $(grep -h 'recovered in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/shrink/seed$s.log | tr '\n' ' ')"
done
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 330 ] && left=330
echo "TestGPU* with ${left} s"
RINGO_TEST_GPUS=0,0 timeout $left $g/ringo.test -test.v -test.timeout $(( left - 5 ))s -test.run 'TestGPU' > $o/tests.log 2>&1
echo "TestGPU rc $? ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callF.tgz .
echo "passed $(grep -c '^--- PASS' $o/tests.log), failed $(grep -c '^--- FAIL' $o/tests.log), skipped $(grep -c '^--- SKIP' $o/tests.log)"
grep -E '^(--- FAIL|panic|FAIL)' $o/tests.log | head -20
grep -E '^(=== RUN|--- )' $o/tests.log | tail -3
