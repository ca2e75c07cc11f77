#!/usr/bin/env bash
# Second call: tiles spanning RINGO_P2P_STRIPE (default 4M) over every rank on the GPU (a rank's stripe is it over
# the ranks). First TestGPUBackToBack, which hung once in the first call (2 ranks, PDL, 1021 elements), 12 times
# each on this build (N) and on the commit before tiles (O), alternating; then A (RINGO_P2P_STRIPE=0) against B
# (default), 3 interleaved rounds; the point-to-point tests; checks with -c 1.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
tar -xJf build/exp2/slim13.tar.xz -C build
g=build/gpu
mkdir -p $OUT/f
for i in $(seq 12); do
  [ $SECONDS -gt 200 ] && break
  for v in N O; do
    bin=$g/ringo.test; [ $v = O ] && bin=$g/ringo-old.test
    RINGO_TEST_GPUS=0,0 timeout 25 $bin -test.run 'TestGPUBackToBack$' -test.v >$OUT/f/b2b-$v-$i.txt 2>&1; rc=$?
    echo "b2b $v $i rc=$rc $(grep -c -- '--- PASS' $OUT/f/b2b-$v-$i.txt) passed" >>$OUT/b2b.txt
    [ $rc = 0 ] && rm $OUT/f/b2b-$v-$i.txt
  done
done
b() { local tag=$1 stripe=$2; shift 2
  echo "### $tag $*" >>$OUT/ab.txt
  if [ -n "$stripe" ]; then RINGO_P2P_STRIPE=$stripe timeout 150 $g/ringo bench "$@" >>$OUT/ab.txt 2>&1 || echo "rc=$? $tag $*" >>$OUT/ab.txt
  else timeout 150 $g/ringo bench "$@" >>$OUT/ab.txt 2>&1 || echo "rc=$? $tag $*" >>$OUT/ab.txt; fi; }
for r in 1 2 3; do
  b copy "" --gpus 0 -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 0
  for v in "A 0" "B"; do
    set -- $v
    b $1 "${2:-}" --gpus 0,0 -coll sendrecv,alltoall -b 16M -e 1G -f 4 -n 20 -w 5 -c 0
    b 4$1 "${2:-}" --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter -b 16M -e 1G -f 4 -n 10 -w 3 -c 0
  done
done
b chk2 "" --gpus 0,0 -coll sendrecv,alltoall,gather,scatter -b 1M -e 64M -f 8 -n 1 -w 1 -c 1 -d all
b chk4 "" --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter -b 100000 -e 200000000 -f 7 -n 2 -w 1 -c 1
b chk4G "" --gpus 0,0,0,0 -coll sendrecv,alltoall -b 64M -e 64M -n 2 -w 1 -c 1 -G 2
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run 'TestGPUPointToPoint|TestGPUScheduleAnyPeer' -test.v -test.timeout 110s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
tar -czf $OUT/b2b-failed.tgz -C $OUT f; rm -rf $OUT/f
cat $OUT/b2b.txt
grep -h "^rc=" $OUT/ab.txt
awk '$1 ~ /^[0-9]+$/ && NF >= 12 && $9 ~ /^[0-9]+$/ {rows++; w += $9; if ($13 ~ /^[0-9]+$/) w += $13} END {printf "ringo bench checked rows %d, wrong %d\n", rows, w}' $OUT/ab.txt
grep -E "^(--- |ok|FAIL|tests rc)|panic" $OUT/tests.txt | tail -8
awk '/^### /{l=$2; c="sendrecv"} /^# [a-z]+$/{c=$2} $1 ~ /^[0-9]+$/ && NF >= 12 && $9 == "N/A" {k=c" "$1" "l; v[k]=v[k]" "$8} END {for (k in v) print k":"v[k]}' $OUT/ab.txt | sort -k1,1 -k2n -k3,3
