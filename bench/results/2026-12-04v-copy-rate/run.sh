#!/usr/bin/env bash
# One H200: how fast blocks copy by access pattern (bench/repro/copy_rate.cu,
# built here with nvcc 11.8 for sm_90), then ringo's send/recv against the
# copy as issue 20 reads it (3 interleaved rounds), ranks sharing GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
xz -dc build/exp/ringo.xz > build/exp/ringo && chmod +x build/exp/ringo
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 200 build/exp/copy_rate 50 >$OUT/copy_rate.txt 2>&1; echo "copy_rate rc=$?"
for r in 1 2 3; do
  for g in 0 0,0; do
    echo "### round $r --gpus $g sendrecv" >>$OUT/bw.txt
    timeout 120 build/exp/ringo bench --gpus $g -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 0 >>$OUT/bw.txt 2>&1 || echo "rc=$? $r $g" >>$OUT/bw.txt
  done
done
grep -h "^rc=" $OUT/bw.txt
awk '/^### /{l=$3" "$5} $1 ~ /^[0-9]+$/ {print l, $1, $6, $8}' $OUT/bw.txt
cat $OUT/copy_rate.txt
