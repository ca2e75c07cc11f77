#!/usr/bin/env bash
# Device call M (2026-12-02d): the GPU tests touched by this session's changes (the capture-aware argument
# check, graphs, local shrink/split/grow with buffers made first), and call K's 4-rank graph sweep again.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callM.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.count 5 -test.run 'TestGPULocalShrinkSplitGrow' > $o/local.log 2>&1
echo "local x5 rc $? ($(( $(date +%s) - t0 )) s): $(grep -c '^--- PASS' $o/local.log) passed $(grep -E '^(--- FAIL|panic)' $o/local.log | head -3 | tr '\n' ' ')"
RINGO_TEST_GPUS=0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUGraphCapture|TestGPUPointToPoint$|TestGPUWorldOfOne|TestGPUBadInput' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ')"
timeout 45 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall -b 8 -e 64K -f 2 -n 200 -w 50 -c 0 -G 5 > $o/lat-4-graph.txt 2>&1
echo "4-rank graph sweep rc $? ($(( $(date +%s) - t0 )) s): $(grep -cE '^ +[0-9]+ ' $o/lat-4-graph.txt) rows"
tar -C $o -czf $OUT/callM.tgz .
grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/lat-4-graph.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo
