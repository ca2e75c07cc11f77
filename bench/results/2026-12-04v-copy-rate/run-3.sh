#!/usr/bin/env bash
# Striped direct sends (experiment, RINGO_EXP_TILE bytes a tile; unset: contiguous parts as before):
# ringo's send/recv and all-to-all on ranks sharing GPU 0, 3 interleaved rounds; O is the build before
# the change; then checks (-c 1) of every point-to-point call with tiles.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
mkdir -p build/exp && tar -xJf build/exp2/bins.tar.xz -C build/exp
b() { local tag=$1 bin=$2 tile=$3; shift 3
  echo "### $tag $*" >>$OUT/ab.txt
  RINGO_EXP_TILE=$tile timeout 120 build/exp/ringo-$bin bench "$@" >>$OUT/ab.txt 2>&1 || echo "rc=$? $tag $*" >>$OUT/ab.txt; }
for r in 1 2 3; do
  b copy s "" --gpus 0 -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 0
  for v in "O o" "A s" "T32 s 32768" "T64 s 65536" "T16 s 16384" "T128 s 131072"; do
    set -- $v
    b $1 $2 "${3:-}" --gpus 0,0 -coll sendrecv -b 4M -e 256M -f 4 -n 20 -w 5 -c 0
  done
  for v in "A s" "T32 s 32768" "T64 s 65536"; do
    set -- $v
    b 4$1 $2 "${3:-}" --gpus 0,0,0,0 -coll sendrecv,alltoall -b 16M -e 1G -f 4 -n 10 -w 3 -c 0
  done
done
for t in 32768 65536; do
  b chk$t s $t --gpus 0,0 -coll sendrecv,alltoall,gather,scatter -b 1M -e 16M -f 4 -n 1 -w 1 -c 1 -d all
  b chk4$t s $t --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter -b 100000 -e 40000000 -f 5 -n 2 -w 1 -c 1
done
grep -h "^rc=" $OUT/ab.txt
awk '$1 ~ /^[0-9]+$/ && NF >= 12 && $9 ~ /^[0-9]+$/ {rows++; w += $9; if ($13 ~ /^[0-9]+$/) w += $13} END {printf "checked rows %d, wrong %d\n", rows, w}' $OUT/ab.txt
awk '/^### /{l=$2; c="sendrecv"} /^# [a-z]+$/{c=$2} $1 ~ /^[0-9]+$/ && NF >= 12 && $9 == "N/A" {k=c" "$1" "l; v[k]=v[k]" "$8} END {for (k in v) print k":"v[k]}' $OUT/ab.txt | sort -k1,1 -k2n -k3,3
