#!/usr/bin/env bash
# Call 2: programmatic dependent launch (PDL) for the copy and point-to-point kernels (experiment build:
# ring.cuh waits for the previous grid and lets the next launch at the top of every block; the host
# launches ringo_copy and ringo_p2p with programmatic stream serialization under RINGO_EXP_PDL=1).
# A: off; P: PDL with the rank's marker recorded after each launch; Q: PDL, no marker.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TEST_GPUS=0,0 RINGO_TIMEOUT=20s
cd build && tar -xJf exp.tar.xz && cd ..
R=build/exp/ringo T=build/exp/ringo.test
setv() { unset RINGO_EXP_PDL RINGO_EXP_NOMARK; case $1 in P) export RINGO_EXP_PDL=1;; Q) export RINGO_EXP_PDL=1 RINGO_EXP_NOMARK=1;; esac; }
run() { # file label args...
  local f=$1 l=$2; shift 2
  echo "### $l: $*" >>$OUT/$f
  setv $l
  timeout 120 $R bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  setv A
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >$OUT/bw.txt
BW="-coll sendrecv,all_gather -b 4M -e 256M -f 4 -n 20 -w 5 -c 0"
for o in "A P Q" "Q A P" "P Q A"; do
  for v in $o; do run bw.txt $v --gpus 0,0 $BW; done
done
run bw.txt copy --gpus 0 -coll sendrecv -b 4M -e 256M -f 4 -n 20 -w 5 -c 0
for o in "A Q" "Q A"; do
  for v in $o; do run bw.txt $v --gpus 0,0,0,0 -coll sendrecv,alltoall,all_gather -b 16M -e 64M -f 4 -n 20 -w 5 -c 0; done
done
for o in "A Q" "Q A"; do
  for v in $o; do run lat.txt $v --gpus 0,0 -coll sendrecv,all_gather -b 8 -e 1M -f 4 -n 300 -w 50 -c 0; done
done
for v in A Q; do
  RINGO_TRACE=$OUT/trace-$v.json run lat.txt $v --gpus 0,0 -coll sendrecv -b 64M -e 64M -n 6 -w 2 -c 0
done
run check.txt Q --gpus 0,0 -coll sendrecv,alltoall,gather,scatter,all_gather,broadcast -b 8 -e 64M -f 8 -c 1 -d all
run check.txt Q --gpus 0,0,0,0 -coll sendrecv,alltoall,all_gather,broadcast -b 8 -e 64M -f 8 -c 1
setv Q
timeout 200 $T -test.run 'TestGPU(PointToPoint|SharedGPU|AllCollectives|GraphCapture)$' -test.v -test.timeout 190s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
setv A
grep -E "^--- |^ok|^FAIL|rc=|panic" $OUT/tests.txt | tail -20
grep -E "rc=|wrong|Out of bounds" $OUT/check.txt | sort | uniq -c | head
awk '$1 ~ /^[0-9]+$/ && NF>=13 && $9 != "N/A" && $9 != 0 {w++} END{print "check rows with wrong>0 (out of place):", w+0}' $OUT/check.txt
awk '/^### /{l=$2; n=($0 ~ /0,0,0,0/)?"4r":"2r"} /^# (all_gather|sendrecv|alltoall)$/{c=$2} $1 ~ /^[0-9]+$/ {print l, n, c, $1, $6, $8}' $OUT/bw.txt $OUT/lat.txt | awk '{k=$1" "$2" "$3" "$4; t[k]=t[k]" "$5; b[k]=b[k]" "$6} END{for(k in t) print k, "| t:" t[k], "| bw:" b[k]}' | sort -k2,2 -k3,3 -k4n -k1,1
