#!/usr/bin/env bash
# Device call G (2026-12-02c): the shrink-and-grow job after ncclCommDestroy of a broken communicator
# succeeds and the survivors agree on the step to go on from.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/shrink
cp build/callG.sh $o/run.sh
t0=$(date +%s)
source /opt/torch/.venv/bin/activate
for s in 3 4 2 7; do
  [ $(( $(date +%s) - t0 )) -gt 150 ] && break
  CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$PWD/build/lib/libnccl.so.2" timeout 55 python3 bench/pytorch/shrink.py --timeout 45 --seed $s --steps 100 > $o/shrink/seed$s.log 2>&1
  echo "seed $s rc $? | $(grep -h ': caught' $o/shrink/seed$s.log | cut -c1-22 | tr '\n' ' ')| $(grep -h 'recovered in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/shrink/seed$s.log | tr '\n' ' ')"
done
tar -C $o -czf $OUT/callG.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
