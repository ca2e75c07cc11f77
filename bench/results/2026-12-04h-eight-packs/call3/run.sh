#!/usr/bin/env bash
# Call 3: what the 2-rank send/recv's per-call overhead is made of (channels, graphs, hardware queues), and the
# latency A/B with B first.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf ab.tar.xz && cd ..
A=build/ab/ringo-a B=build/ab/ringo-b
run() { # file label bin args...
  local f=$1 l=$2 b=$3; shift 3
  echo "### $l: $*" >>$OUT/$f
  timeout 120 $b bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
}
BW="-coll sendrecv -b 16M -e 256M -f 2 -n 20 -w 5 -c 0"
for r in 1 2 3; do
  run bw.txt sr-64ch $B --gpus 0,0 $BW
  NCCL_MAX_P2P_NCHANNELS=32 run bw.txt sr-32ch $B --gpus 0,0 $BW
  CUDA_DEVICE_MAX_CONNECTIONS=32 run bw.txt sr-conn32 $B --gpus 0,0 $BW
  run bw.txt sr-graph $B --gpus 0,0 $BW -G 20
  run bw.txt copy $B --gpus 0 $BW
  run bw.txt copy-graph $B --gpus 0 $BW -G 20
done
for r in 1 2 3; do
  for v in B A; do
    run lat.txt lat-$v ${!v} --gpus 0,0 -coll all_reduce,sendrecv -b 8K -e 1M -f 2 -n 300 -w 50 -c 0
  done
done
awk '/^### /{l=$2} $1 ~ /^[0-9]+$/ && $1 >= 16777216 {print l, $1, $8}' $OUT/bw.txt | sort -k1,1 -k2n | awk '{k=$1" "$2; a[k]=a[k]" "$3} END{for(k in a) print k, a[k]}' | sort -k1,1 -k2n
