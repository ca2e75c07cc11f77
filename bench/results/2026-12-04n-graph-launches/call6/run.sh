#!/usr/bin/env bash
# Call 6: replays with their graphs made off the launch path (device/replays.go's builder). A short A/B first
# (A: RINGO_REPLAY_DISABLE=1, B: default), interleaved, then the whole TestGPU* suite (run.sh's test stage) on
# the default. Ranks share GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=20s
cd build && tar -xJf slim8.tar.xz && cd ..
g=build/gpu R=build/gpu/ringo
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
run() { # file label cmd...
  local f=$1 l=$2; shift 2
  echo "### $l: $*" >>$OUT/$f
  if [ $l = A ]; then export RINGO_REPLAY_DISABLE=1; else unset RINGO_REPLAY_DISABLE; fi
  timeout 40 "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  unset RINGO_REPLAY_DISABLE
}
for o in "A B" "B A"; do for v in $o; do
  run nt2.txt $v env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/all_reduce_perf -g 2 -b 8 -e 256K -f 4 -n 300 -w 50 -c 0
  run nt2.txt $v env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/sendrecv_perf -g 2 -b 8 -e 256K -f 4 -n 300 -w 50 -c 0
  run lat2.txt $v $R bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 256K -f 4 -n 300 -w 50 -c 0
done; done
run bw.txt A $R bench --gpus 0,0 -coll all_reduce,sendrecv -b 4M -e 64M -f 4 -n 20 -w 5 -c 0
run bw.txt B $R bench --gpus 0,0 -coll all_reduce,sendrecv -b 4M -e 64M -f 4 -n 20 -w 5 -c 0
run chk.txt B env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/all_reduce_perf -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c 1 -d all
run chk.txt B env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/sendrecv_perf -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c 1 -d all
run chk.txt B env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib $g/alltoall_perf -g 4 -b 64 -e 1M -f 8 -n 5 -w 2 -c 1
echo "A/B and checks $(el)"; grep -h '^rc=' $OUT/*.txt
awk '/^ +[0-9]+ +[0-9]+ / { rows++; a = $9; if (a != 0) w += a } END { printf "nccl-tests checks: %d rows, #wrong %d\n", rows, w }' $OUT/chk.txt
for f in nt2 lat2 bw; do
  awk -v F=$f '/^### /{l=$2} /^# [a-z_]+$/{c=$2} /_perf/{c=$0; sub(/.*\//,"",c); sub(/ .*/,"",c)}
    $1 ~ /^[0-9]+$/ && NF >= 10 {print F, c, $1, l, $6}' $OUT/$f.txt
done | awk '{k=$1" "$2" "$3; v[k" "$4]=v[k" "$4]" "$5; keys[k]=1} END{for(k in keys) print k, "| A:" v[k" A"], "| B:" v[k" B"]}' | sort -k1,1 -k2,2 -k3n > $OUT/table.txt
RINGO_TEST_GPUS=0,0 RINGO_TEST_TIMEOUT=$(( 560 - $(date +%s) + t0 )) bash $g/run.sh $OUT test 2>&1 | tail -8
echo "suite $(el)"
cat $OUT/table.txt
