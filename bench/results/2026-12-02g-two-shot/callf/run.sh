#!/usr/bin/env bash
# Device call f (2026-12-02g): the PyTorch scripts after the review's refactor (ddp_train.run_steps serves
# both), with call d's bundle (0116ce3): Gloo reference, FSDP2, DDP in an NCCL memory pool, ddp_train.py.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/f; mkdir -p $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callf.sh $o/run.sh
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
save() { tar -C $o -czf $OUT/callf.tgz .; }
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 70 torchrun --standalone "$@"; }
trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
for m in fsdp2 ddp-pool; do
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode $m --allocator $PWD/$g/lib/libncclalloc.so --out $o/torch/$m.csv > $o/torch/$m.log 2>&1; echo "ringo $m rc $? $(el): $(grep -E 'segments|steps' $o/torch/$m.log | head -2 | tr '\n' ' ')"
  python3 $py/compare.py $o/torch/gloo.csv $o/torch/$m.csv --rtol 1e-5 > $o/torch/compare-$m.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-$m.txt)"
  save
done
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/ddp_train.py --steps 10 --out $o/torch/ddp-ringo.csv > $o/torch/ddp-ringo.log 2>&1; echo "ddp_train ringo rc $? $(el): $(grep steps $o/torch/ddp-ringo.log)"
echo "=== total $(el)"; save
