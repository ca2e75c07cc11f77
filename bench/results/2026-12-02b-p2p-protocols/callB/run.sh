#!/usr/bin/env bash
# Device call B (issues 20, 21): PyTorch p2p/MoE/pipeline, the shrink-and-grow job, recovery times.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -x $g/ringo ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/p2pB.sh $o/run.sh
t0=$(date +%s)
source /opt/torch/.venv/bin/activate
mkdir -p $o/st/shrink
shrink() { CUDA_VISIBLE_DEVICES=0 LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 150 python3 bench/pytorch/shrink.py --timeout 120 "$@"; }
shrink --seed 1 > $o/st/shrink/torch.log 2>&1; echo "shrink.py seed 1 rc $? ($(( $(date +%s) - t0 )) s)"
grep -E '^(seed|OK|FAIL|grow:)|recovered|grown|replacement|kill -9|caught|done|Error|error' $o/st/shrink/torch.log | tail -30
if grep -q "^OK" $o/st/shrink/torch.log; then
  for s in 2 3 4 5 6 7 8 9 10; do
    shrink --seed $s --steps 100 > $o/st/shrink/seed$s.log 2>&1
    echo "seed $s rc $? | $(grep -h 'recovered in' $o/st/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/st/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/st/shrink/seed$s.log | tr '\n' ' ')"
    [ $(( $(date +%s) - t0 )) -gt 250 ] && break
  done
fi
timeout 230 $g/run.sh $o/pt p2p-torch > $o/p2p-torch.txt 2>&1; echo "p2p-torch rc $? ($(( $(date +%s) - t0 )) s)"; grep -v "^===" $o/p2p-torch.txt | tail -40
tar -C $o -czf $OUT/p2pB.tgz .
