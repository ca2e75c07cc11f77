#!/usr/bin/env bash
# Call 2: replays of a call's launch (device/replays.go). launch_cost's query costs; the new and nearby
# GPU tests; then A (RINGO_REPLAY_DISABLE=1) against B (default, replays on) through ringo bench and
# nccl-tests, interleaved. Ranks share GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=30s
cd build && tar -xJf slim7.tar.xz && cd ..
g=build/gpu R=build/gpu/ringo
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
timeout 100 $g/launch_cost --grid 64 --spin-ns 10000 > $OUT/launch-cost.txt 2>&1; echo "launch_cost rc $? $(el)"
RINGO_TEST_GPUS=0,0 timeout 230 $g/ringo.test -test.run 'TestGPUReplays|TestGPUBackToBack|TestGPUGraphReplays|TestGPUGraphCapture|TestGPUDirectAllReduce' \
  -test.v -test.timeout 220s > $OUT/tests.txt 2>&1; echo "tests rc $? $(el)"
grep -E '^(--- |ok|FAIL|PASS)' $OUT/tests.txt | grep -v '^    ' | head -30
run() { # file label cmd...
  local f=$1 l=$2; shift 2
  echo "### $l: $*" >>$OUT/$f
  if [ $l = A ]; then export RINGO_REPLAY_DISABLE=1; else unset RINGO_REPLAY_DISABLE; fi
  timeout 60 "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  unset RINGO_REPLAY_DISABLE
}
for o in "A B" "B A"; do for v in $o; do
  run lat2.txt $v $R bench --gpus 0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 1M -f 4 -n 300 -w 50 -c 0
  run nt2.txt $v env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/all_reduce_perf -g 2 -b 8 -e 1M -f 4 -n 300 -w 50 -c 0
  run nt2.txt $v env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/sendrecv_perf -g 2 -b 8 -e 1M -f 4 -n 300 -w 50 -c 0
done; done
echo "latency A/B 2 ranks $(el)"
for o in "A B" "B A"; do for v in $o; do
  run lat4.txt $v $R bench --gpus 0,0,0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 8 -n 200 -w 50 -c 0
  run nt4.txt $v env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/alltoall_perf -g 4 -b 64 -e 64K -f 8 -n 200 -w 50 -c 0
done; done
echo "latency A/B 4 ranks $(el)"
for o in "A B" "B A"; do for v in $o; do
  run bw.txt $v $R bench --gpus 0,0 -coll all_reduce,sendrecv -b 4M -e 64M -f 4 -n 20 -w 5 -c 0
done; done
echo "bandwidth A/B $(el)"
# file, collective, size | A's times | B's times (us, out of place): ringo bench's and nccl-tests' rows alike.
for f in lat2 nt2 lat4 nt4 bw; do
  awk -v F=$f '/^### /{l=$2} /^# [a-z_]+$/{c=$2} /_perf/{c=$0; sub(/.*\//,"",c); sub(/ .*/,"",c)}
    $1 ~ /^[0-9]+$/ && NF >= 10 {print F, c, $1, l, $6}' $OUT/$f.txt
done | awk '{k=$1" "$2" "$3; v[k" "$4]=v[k" "$4]" "$5; keys[k]=1} END{for(k in keys) print k, "| A:" v[k" A"], "| B:" v[k" B"]}' | sort -k1,1 -k2,2 -k3n > $OUT/table.txt
grep RESULT $OUT/launch-cost.txt
cat $OUT/table.txt
