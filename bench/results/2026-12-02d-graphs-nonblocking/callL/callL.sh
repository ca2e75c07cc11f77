#!/usr/bin/env bash
# Device call L (2026-12-02d): does a CUDA graph of many calls of 4 ranks sharing one GPU in one process hang
# (call K's lat-4-graph printed nothing in 60 s)? Graphs of 5, 20, 50, 200 all-reduces; 3 ranks; the GPU
# tests around graphs and the argument checks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callL.sh $o/run.sh
t0=$(date +%s)
for gp in 0,0,0,0:5 0,0,0,0:20 0,0,0,0:50 0,0,0,0:200 0,0,0:200 0,0:200; do
  gpus=${gp%%:*}; n=${gp##*:}
  timeout 25 $g/ringo bench --gpus $gpus -coll all_reduce -b 8 -e 8 -n $n -w 2 -c 0 -G 3 > $o/g-$gpus-$n.txt 2>&1
  echo "gpus $gpus graph of $n: rc $? $(grep -E '^ +8 ' $o/g-$gpus-$n.txt | awk '{print $6, $10}')"
done
timeout 25 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce -b 8 -e 8 -n 200 -w 2 -c 0 > $o/nog-4-200.txt 2>&1
echo "4 ranks, no graph, 200 calls: rc $? $(grep -E '^ +8 ' $o/nog-4-200.txt | awk '{print $6, $10}')"
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.v -test.timeout 115s -test.run 'TestGPUGraphCapture|TestGPUPointToPoint|TestGPUSharedGPU|TestGPUWorldOfOne|TestGPUBadInput|TestGPULocalShrinkSplitGrow' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ')"
tar -C $o -czf $OUT/callL.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
