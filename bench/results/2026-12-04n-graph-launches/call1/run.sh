#!/usr/bin/env bash
# Device call 1 (2026-12-04, nineteenth session): what a graph launch of a call's kernel would cost the
# host, against ringo's launch (with PDL) — launch_cost's new configurations, grid 1 and 64, twice each.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt 2>&1
for round in 1 2; do
  for grid in 1 64; do
    timeout 150 build/repro/launch_cost --grid $grid --spin-ns 10000 > $OUT/lc-g$grid-r$round.txt 2>&1
    echo "grid $grid round $round rc $?"
  done
done
paste <(grep RESULT $OUT/lc-g1-r1.txt | awk '{print $2, $3}') <(grep RESULT $OUT/lc-g1-r2.txt | awk '{print $3}') \
      <(grep RESULT $OUT/lc-g64-r1.txt | awk '{print $3}') <(grep RESULT $OUT/lc-g64-r2.txt | awk '{print $3}')
