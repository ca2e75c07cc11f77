#!/usr/bin/env bash
# Device call for issue 21: shrink on one H200.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
source /opt/torch/.venv/bin/activate
python3 - > $o/torchapi.txt 2>&1 <<'PY'
import inspect, torch, torch.distributed as dist
print(torch.__version__)
print([n for n in dir(dist) if any(k in n.lower() for k in ('grow', 'shrink', 'merge', 'split'))])
if hasattr(dist, 'shrink_group'):
    print(inspect.signature(dist.shrink_group))
    print(inspect.getsource(dist.shrink_group))
from torch._C._distributed_c10d import ProcessGroupNCCL
print([n for n in dir(ProcessGroupNCCL) if not n.startswith('__')])
PY
head -c 3000 $o/torchapi.txt | head -8
lt=$(python3 -c "import torch,os;print(os.path.join(os.path.dirname(torch.__file__),'lib'))")
for f in $lt/libtorch_cuda.so $lt/libtorch*.so; do nm -D "$f" 2>/dev/null | grep -E 'ncclComm(Shrink|Grow|Revoke|GetUniqueId)' | sed "s|^|$(basename $f): |"; done | sort -u >> $o/torchapi.txt
time build/gpu/run.sh $o shrink
cp build/gpu/../../bench/pytorch/shrink.py $o/ 2>/dev/null
echo "--- 9 more seeds, recovery times"
grep -q "^OK" $o/shrink/torch.log && for s in 2 3 4 5 6 7 8 9 10; do
  CUDA_VISIBLE_DEVICES=0 LD_PRELOAD=$PWD/build/gpu/lib/libnccl.so.2 timeout 150 python3 bench/pytorch/shrink.py --seed $s --steps 100 > $o/shrink/seed$s.log 2>&1
  echo "seed $s rc $? $(grep -h recovered $o/shrink/seed$s.log | head -1) $(grep -E '^(OK|FAIL)' $o/shrink/seed$s.log | tr '\n' ' ')"
done
tar -C $o -czf $OUT/shrink.tgz . 
