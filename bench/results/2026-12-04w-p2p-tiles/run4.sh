#!/usr/bin/env bash
# Fourth call: what loading every kernel at set-up costs. Wall time of a whole `ringo bench` of one 8-B
# all-reduce (processes start, GPUs set up, one call, exit), on the commit before this session (o) and on
# this session's (n), alternating, 6 each; 2 ranks sharing GPU 0, and a world of one.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
mkdir -p build/setup && tar -xJf build/exp2/setup.tar.xz -C build/setup
for i in 1 2 3 4 5 6; do
  for v in o n; do
    for g in 0 0,0; do
      s=$(date +%s.%N); build/setup/ringo-$v bench --gpus $g -b 8 -e 8 -n 1 -w 1 -c 0 >/dev/null 2>&1; rc=$?
      e=$(date +%s.%N); echo "$v gpus=$g rc=$rc $(awk -v a=$s -v b=$e 'BEGIN{printf "%.3f", b-a}') s"
    done
  done
done | tee $OUT/setup.txt
