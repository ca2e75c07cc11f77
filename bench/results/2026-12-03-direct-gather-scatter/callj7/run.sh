#!/usr/bin/env bash
# Device call j7 (2026-12-03): PyTorch under torchrun with ringo's libnccl.so.2 now that reduce-scatters and
# all-gathers read directly (2 processes sharing the GPU, over CUDA IPC: staged): collectives.py, FSDP2 against
# Gloo's DDP, collectives captured in torch.cuda.graph. Steps stop being started after 190 s.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/torch; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj7.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callj7.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
late() { [ $(( $(date +%s) - t0 )) -gt 190 ]; }
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 70 torchrun --standalone "$@"; }
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL $(el)"
save
late || { LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode fsdp2 --out $o/torch/fsdp2.csv > $o/torch/fsdp2.log 2>&1; echo "ringo fsdp2 rc $? $(el)"; save; }
late || { trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"; }
python3 $py/compare.py $o/torch/gloo.csv $o/torch/fsdp2.csv --rtol 1e-5 > $o/torch/compare-fsdp2.txt 2>&1; echo "fsdp2 vs gloo rc $?: $(head -1 $o/torch/compare-fsdp2.txt)"
save
late || { LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode graphs --steps 10 > $o/torch/graphs-2.log 2>&1; echo "graphs 2 rc $? $(el): $(grep -E 'graphs:|wrong' $o/torch/graphs-2.log | head -3 | tr '\n' ' ')"; }
save
echo "=== total $(el)"
