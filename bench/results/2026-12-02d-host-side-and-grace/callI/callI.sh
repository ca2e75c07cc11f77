#!/usr/bin/env bash
# Device call I (2026-12-02d): where a call's 7 µs of host side go (CPU profile of BenchmarkGPUEnqueue);
# NewLocalGPUs shrink/split/grow; a shrunk communicator's all-reduce busbw against a fresh one; the
# multi-process GPU shrink and grow, again.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callI.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue/allreduce$' -test.benchtime 100000x -test.benchmem -test.cpuprofile $o/ar.pprof > $o/enqueue.txt 2>&1
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue/sendrecv$' -test.benchtime 100000x -test.benchmem -test.cpuprofile $o/sr.pprof >> $o/enqueue.txt 2>&1
echo "enqueue ($(( $(date +%s) - t0 )) s)"
RINGO_TEST_GPUS=0,0 timeout 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPULocalShrinkSplitGrow|TestGPUProcessesShrink' > $o/shrink-tests.log 2>&1
echo "shrink tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/shrink-tests.log | tr '\n' ' ')"
RINGO_TEST_GPUS=0 timeout 200 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUShrunkAllReduce' -test.benchtime 20x -test.count 3 > $o/shrunk-busbw.txt 2>&1
echo "shrunk busbw rc $? ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callI.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
grep -E '^(Benchmark|--- FAIL|panic)' $o/enqueue.txt $o/shrunk-busbw.txt
grep -E '^(--- FAIL|panic|\s+gpu_shrink_test)' $o/shrink-tests.log | head -20
