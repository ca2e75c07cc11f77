#!/usr/bin/env bash
# Device call k1 (2026-12-03, eleventh session): ncclMemAlloc on CUDA's virtual memory API (cuMemCreate),
# windows of such memory across processes (file descriptors lent over Unix sockets): the Go tests, nccl-tests
# -R 1/-R 2 (whose buffers come from ncclMemAlloc), PyTorch's DDP with its buckets in an ncclMemAlloc pool.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/torch; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk1.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk1.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1800; }
uname -r; cat /proc/sys/kernel/yama/ptrace_scope 2>&1 | head -1
for gs in 0,0 0,0,0,0; do
  env RINGO_TEST_GPUS=$gs GOTRACEBACK=all timeout -s QUIT 100 $g/ringo.test -test.v -test.timeout 95s \
    -test.run 'TestGPUAllocShared|TestGPUWindows' > $o/tests-$gs.log 2>&1
  echo "tests $gs rc $? $(el): $(res $o/tests-$gs.log)"
done
save
env RINGO_TEST_GPUS=0 GOTRACEBACK=all timeout -s QUIT 200 $g/ringo.test -test.v -test.timeout 195s \
  -test.run 'TestGPUProcessesWindows' > $o/tests-proc.log 2>&1
echo "processes rc $? $(el): $(res $o/tests-proc.log)"
save
for R in 1 2; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -R $R -b 8 -e 8M -f 8 -c 1 -d all -o all -n 2 -w 1 > $o/nt/ar-R$R.out 2>&1
  echo "all_reduce_perf -R $R rc $? $(el): $(grep -E 'Out of bounds|Avg bus' $o/nt/ar-R$R.out | tr '\n' ' ')"
done
save
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 100 torchrun --standalone "$@"; }
trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp-pool --allocator $PWD/$g/lib/libncclalloc.so --out $o/torch/pool.csv > $o/torch/pool.log 2>&1; echo "ringo ddp-pool rc $? $(el): $(grep -E 'segments|steps|Error' $o/torch/pool.log | head -3 | tr '\n' ' ')"
python3 $py/compare.py $o/torch/gloo.csv $o/torch/pool.csv --rtol 1e-5 > $o/torch/compare-pool.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-pool.txt)"
save
echo "=== total $(el)"
