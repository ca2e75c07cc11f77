#!/usr/bin/env bash
# Device call d (2026-12-02g): TestGPUStreams with plans uploaded first (call c hung in a plan's upload while
# the rank's other stream waited for the order marker), twice; TestGPUDirectAllReduce/graphs three times (call
# a1 and b1 hung there, call c passed); PyTorch FSDP2 and DDP in an NCCL memory pool (pluggable allocator).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/d; mkdir -p $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/calld.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calld.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
for i in 1 2; do
  RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 45 $g/ringo.test -test.v -test.timeout 44s -test.run 'TestGPUStreams' > $o/tests-streams-$i.log 2>&1
  echo "streams $i rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)|^    --- ' $o/tests-streams-$i.log | tr '\n' ' ' | cut -c1-300)"
  save
done
for i in 1 2 3; do
  RINGO_TEST_SWEEP=25s RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 20 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/tests-graphs-$i.log 2>&1
  echo "graphs $i rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic|SIGQUIT)|^    --- ' $o/tests-graphs-$i.log | tr '\n' ' ' | cut -c1-200)"
  save
done
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 80 torchrun --standalone "$@"; }
trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
for m in fsdp2 ddp-pool; do
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode $m --allocator $PWD/$g/lib/libncclalloc.so --out $o/torch/$m.csv > $o/torch/$m.log 2>&1; echo "ringo $m rc $? $(el): $(grep -E 'segments|steps|multicast' $o/torch/$m.log | head -3 | tr '\n' ' ')"
  python3 $py/compare.py $o/torch/gloo.csv $o/torch/$m.csv --rtol 1e-5 > $o/torch/compare-$m.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-$m.txt)"
  save
done
echo "=== total $(el)"
