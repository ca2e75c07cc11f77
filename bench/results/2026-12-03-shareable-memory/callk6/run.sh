#!/usr/bin/env bash
# Device call k6 (2026-12-03): ncclCommRegister registers (Comm.Register: the other processes' ranks map the
# buffer through their services; inputs inside read in place): the Go tests, nccl-tests -R 1, PyTorch's DDP with
# its buckets in an ncclMemAlloc pool registered by register_mem_pool (2 processes), collectives.py.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/torch; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk6.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk6.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1800; }
for gs in 0,0 0,0,0,0; do
  env RINGO_TEST_GPUS=$gs GOTRACEBACK=all timeout -s QUIT 100 $g/ringo.test -test.v -test.timeout 95s \
    -test.run 'TestGPUAllocShared|TestGPUWindows' > $o/tests-$gs.log 2>&1
  echo "tests $gs rc $? $(el): $(res $o/tests-$gs.log)"
done
env RINGO_TEST_GPUS=0 GOTRACEBACK=all timeout -s QUIT 200 $g/ringo.test -test.v -test.timeout 195s \
  -test.run 'TestGPUProcessesWindows' > $o/tests-proc.log 2>&1
echo "processes rc $? $(el): $(res $o/tests-proc.log)"
save
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -R 1 -b 8 -e 8M -f 8 -c 1 -d float -o all -n 2 -w 1 > $o/nt/ar-R1.out 2>&1
echo "all_reduce_perf -R 1 rc $? $(el): $(grep -E 'Out of bounds' $o/nt/ar-R1.out | tr '\n' ' ')"
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 100 torchrun --standalone "$@"; }
trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=REG LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp-pool --allocator $PWD/$g/lib/libncclalloc.so --out $o/torch/pool.csv > $o/torch/pool.log 2>&1; echo "ringo ddp-pool rc $? $(el): $(grep -E 'segments|steps|Error|register' $o/torch/pool.log | head -4 | tr '\n' ' ')"
python3 $py/compare.py $o/torch/gloo.csv $o/torch/pool.csv --rtol 1e-5 > $o/torch/compare-pool.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-pool.txt)"
save
LD_PRELOAD=$LP trun --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL $(el)"
save
echo "=== total $(el)"
