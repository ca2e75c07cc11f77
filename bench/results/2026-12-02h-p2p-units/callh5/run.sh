#!/usr/bin/env bash
# Device call h5 (2026-12-02h): PyTorch under torchrun with ringo's libnccl.so.2 (LD_PRELOAD), plans uploaded by
# ringo_upload in every process: collectives.py and p2p.py at 2 and 4 processes, the MoE model and DDP against Gloo.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/torch; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh5.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callh5.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 100 torchrun --standalone "$@"; }
for n in 2 4; do
  LD_PRELOAD=$LP trun --nproc_per_node $n $py/collectives.py > $o/torch/collectives-$n.log 2>&1; echo "collectives.py $n rc $?: $(grep -c '^OK' $o/torch/collectives-$n.log) OK, $(grep -c '^FAIL' $o/torch/collectives-$n.log) FAIL $(el)"
  LD_PRELOAD=$LP trun --nproc_per_node $n $py/p2p.py > $o/torch/p2p-$n.log 2>&1; echo "p2p.py $n rc $?: $(grep -c '^OK' $o/torch/p2p-$n.log) OK, $(grep -c '^FAIL' $o/torch/p2p-$n.log) FAIL $(el)"
  save
done
trun --nproc_per_node 2 $py/moe.py --steps 20 --backend gloo --out $o/torch/moe-gloo.csv > $o/torch/moe-gloo.log 2>&1; echo "moe gloo rc $? $(el)"
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/moe.py --steps 20 --out $o/torch/moe-ringo.csv > $o/torch/moe-ringo.log 2>&1; echo "moe ringo rc $? $(el)"
python3 $py/compare.py $o/torch/moe-gloo.csv $o/torch/moe-ringo.csv > $o/torch/compare-moe.txt 2>&1; echo "moe vs gloo rc $?: $(head -1 $o/torch/compare-moe.txt)"
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/ddp_train.py --steps 20 --out $o/torch/ddp-ringo.csv > $o/torch/ddp-ringo.log 2>&1; echo "ddp ringo rc $? $(el)"
trun --nproc_per_node 2 $py/ddp_train.py --steps 20 --backend gloo --out $o/torch/ddp-gloo.csv > $o/torch/ddp-gloo.log 2>&1; echo "ddp gloo rc $? $(el)"
python3 $py/compare.py $o/torch/ddp-gloo.csv $o/torch/ddp-ringo.csv > $o/torch/compare-ddp.txt 2>&1; echo "ddp vs gloo rc $?: $(head -1 $o/torch/compare-ddp.txt)"
save
echo "=== total $(el)"
