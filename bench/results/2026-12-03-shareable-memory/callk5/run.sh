#!/usr/bin/env bash
# Device call k5 (2026-12-03): how many hardware queues do streams get? graph_replays --gap S puts S streams,
# each used by one kernel (call k4's were never used), between the two ranks' streams; with streams given queues
# in turn, the ranks share one (and hang) when S+1 is a multiple of the queues' number.
# CUDA_DEVICE_MAX_CONNECTIONS=32 (as ringo sets it), then 8. Then ringo's TestGPUDirectAllReduce/graphs 7 times.
o=/tmp/o; mkdir -p $o; t0=$(date +%s)
cp build/callk5.sh $o/run.sh
for q in 32 8; do
  for S in $(seq 0 34); do
    [ $q = 8 ] && [ $S -gt 17 ] && break
    f=$o/q$q-gap$S.log
    CUDA_DEVICE_MAX_CONNECTIONS=$q timeout -k 1 15 build/repro/graph_replays --trials 3 --timeout 2 --max-hangs 1 --check 0 --gap $S > $f 2>&1
    echo "q$q gap $S rc $?: $(grep -o 'hangs=[0-9]*' $f) ($(( $(date +%s) - t0 )) s)"
  done
done | tee $o/summary.txt | awk '{printf "%s ", $0} END{print ""}' | sed 's/ rc 0//g'
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
g=build/gpu; [ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
for i in 1 2 3 4 5 6 7; do
  f=$o/graphs-$i.log
  env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 15 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $f 2>&1
  echo "graphs $i: $(grep -E '^--- ' $f | head -1) $(grep -m1 -o 'waits for the start[^"]*' $f) ($(( $(date +%s) - t0 )) s)"
done
tar -C $o -czf $OUT/callk5.tgz .
