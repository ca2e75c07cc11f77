#!/usr/bin/env bash
# Device call S (2026-12-02e): synchronous copies through the device's own stream (not the legacy one): the
# 4-rank sweep ten times (call R: 2 of 5 deadlocked, stuck in cuStreamSynchronize(0) of a plan's upload), and
# the GPU tests that lean on those copies (stale data, leaks, graphs, shared GPU, point-to-point).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/sweep; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callS.sh $o/run.sh
t0=$(date +%s)
L="-coll all_reduce,sendrecv,alltoall -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  f=$o/sweep/run-$i
  GOTRACEBACK=all timeout -s QUIT 15 $g/ringo bench --gpus 0,0,0,0 $L > $f.out 2> $f.err
  echo "sweep $i: rc $? rows $(grep -cE '^ +[0-9]+ ' $f.out) $(grep -oE '_Cfunc_[A-Za-z0-9_]+' $f.err | sort | uniq -c | tr '\n' ' ')"
done
echo "sweeps ($(( $(date +%s) - t0 )) s)"
RINGO_TEST_GPUS=0,0 timeout 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPUAllCollectives|TestGPUGraphCapture|TestGPUPointToPoint$|TestGPUSharedGPU|TestGPUCloseGivesBack|TestGPUBadInput|TestGPUWorldOfOne' > $o/tests-2.log 2>&1
echo "tests 2 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-2.log | tr '\n' ' ' | cut -c1-700)"
RINGO_TEST_GPUS=0,0,0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint$|TestGPUSharedLateRank|TestGPUAllCollectives' > $o/tests-4.log 2>&1
echo "tests 4 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-4.log | tr '\n' ' ' | cut -c1-400)"
tar -C $o -czf $OUT/callS.tgz .
echo "--- run 1 (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/sweep/run-1.out | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo
echo "=== total $(( $(date +%s) - t0 )) s"
