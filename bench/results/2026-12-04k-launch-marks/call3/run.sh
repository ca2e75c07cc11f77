#!/usr/bin/env bash
# Call 3: PDL's trigger early (E: every block lets the next grid launch right after its own wait) against late
# (L: after its last step); A: no PDL (ringo-L without RINGO_EXP_PDL). Launches captured into graphs carry the
# attribute too. The rank's marker stays recorded after each launch.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=20s
cd build && tar -xJf exp.tar.xz && cd ..
T=build/exp/ringo.test
run() { # file label args...
  local f=$1 l=$2 b=build/exp/ringo-L; shift 2
  echo "### $l: $*" >>$OUT/$f
  unset RINGO_EXP_PDL
  case $l in E) b=build/exp/ringo-E; export RINGO_EXP_PDL=1;; L) export RINGO_EXP_PDL=1;; esac
  timeout 120 $b bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  unset RINGO_EXP_PDL
}
BW="-coll sendrecv,all_gather -b 4M -e 256M -f 4 -n 20 -w 5 -c 0"
for o in "A E L" "L A E" "E L A"; do
  for v in $o; do run bw.txt $v --gpus 0,0 $BW; done
done
for o in "A E L" "L E A"; do
  for v in $o; do run bw.txt $v --gpus 0,0,0,0 -coll sendrecv,alltoall,all_gather -b 16M -e 64M -f 4 -n 20 -w 5 -c 0; done
done
for o in "A E L" "L E A"; do
  for v in $o; do run lat.txt $v --gpus 0,0 -coll sendrecv,all_gather -b 8 -e 1M -f 4 -n 300 -w 50 -c 0; done
done
for o in "A E L" "L E A"; do
  for v in $o; do run glat.txt $v --gpus 0,0 -coll sendrecv,all_gather -b 8 -e 1M -f 4 -n 50 -w 20 -c 0 -G 10; done
done
for v in E L; do
  run check.txt $v --gpus 0,0 -coll sendrecv,alltoall,gather,scatter,all_gather,broadcast -b 8 -e 64M -f 8 -c 1 -d all
  run check.txt $v --gpus 0,0,0,0 -coll sendrecv,alltoall,all_gather,broadcast -b 8 -e 64M -f 8 -c 1
  run check.txt $v --gpus 0,0 -coll sendrecv,all_gather,broadcast -b 8 -e 16M -f 8 -c 1 -G 3
done
export RINGO_EXP_PDL=1
timeout 200 $T -test.run 'TestGPU(PointToPoint|SharedGPU|AllCollectives|GraphCapture|SharedLateRank)$' -test.v -test.timeout 190s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
unset RINGO_EXP_PDL
grep -E "^--- |^ok|^FAIL|rc=|panic" $OUT/tests.txt | tail -20
grep -E "^rc=" $OUT/*.txt
awk '$1 ~ /^[0-9]+$/ && NF>=13 && (($9 != "N/A" && $9 != 0) || ($13 != "N/A" && $13 != 0)) {w++} $1 ~ /^[0-9]+$/ {n++} END{print "check rows:", n, "with wrong>0:", w+0}' $OUT/check.txt
for f in bw lat glat; do
awk -v F=$f '/^### /{l=$2; n=($0 ~ /0,0,0,0/)?"4r":"2r"} /^# (all_gather|sendrecv|alltoall)$/{c=$2} $1 ~ /^[0-9]+$/ {print F, l, n, c, $1, $6, $8}' $OUT/$f.txt | awk '{k=$1" "$2" "$3" "$4" "$5; t[k]=t[k]" "$6; b[k]=b[k]" "$7} END{for(k in t) print k, "| t:" t[k], "| bw:" b[k]}' | sort -k3,3 -k4,4 -k5n -k2,2
done
