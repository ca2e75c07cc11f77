#!/usr/bin/env bash
# Device call Q (2026-12-02e): the 4-rank latency sweep again, eight times, now that ringo bench waits for every
# rank's buffers before the first launch (call P: 4 of 10 deadlocked in their first collective); the library's own
# lazy connections under a late rank (TestGPUSharedLateRank, three times).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/sweep; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callQ.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0,0,0 timeout 200 $g/ringo.test -test.v -test.count 3 -test.timeout 195s -test.run 'TestGPUSharedLateRank' > $o/late.log 2>&1
echo "late rank x3 rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)|gpu_test' $o/late.log | tr '\n' ' ' | cut -c1-600)"
L="-coll all_reduce,sendrecv,alltoall -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
for i in 1 2 3 4 5 6 7 8; do
  f=$o/sweep/run-$i
  s=$(date +%s%N)
  RINGO_TIMEOUT=12s GOTRACEBACK=all timeout -s QUIT 30 $g/ringo bench --gpus 0,0,0,0 $L > $f.out 2> $f.err
  rc=$?
  echo "sweep $i: rc $rc $(( ($(date +%s%N) - s) / 1000000 )) ms, rows $(grep -cE '^ +[0-9]+ ' $f.out), $(grep -m1 -iE 'error|timed out|SIGQUIT' $f.err | cut -c1-300)"
done
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 > $o/lat-2.txt 2>&1; echo "lat 2 rc $?"
echo "sweeps ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callQ.tgz .
for f in $o/sweep/run-1.out $o/lat-2.txt; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $f | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
echo "=== total $(( $(date +%s) - t0 )) s"
