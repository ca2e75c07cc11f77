#!/usr/bin/env bash
# Device call h3 (2026-12-02h): plans uploaded by a kernel (ringo_upload) on the call's stream, not by the
# driver's host-to-device copy: TestGPUStreams x4 without round-0 waits (a 15-s deadline, so a hang ends in an
# error); the suite that exercises uploads (collectives, plan cache, graphs capture, shared GPU, world of one,
# processes' point-to-point); TestGPUDirectAllReduce/graphs x6; nccl-tests all_reduce -d all; send/recv latency.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/bench; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh3.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callh3.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
tl() { grep -E '^(--- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-700; }
for i in 1 2 3 4; do
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=15s GOTRACEBACK=all timeout -s QUIT 40 $g/ringo.test -test.v -test.run 'TestGPUStreams' > $o/streams-$i.log 2>&1
  echo "streams $i rc $? $(el): $(tl $o/streams-$i.log)"
done
save
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPUAllCollectives|TestGPUGraphCapture|TestGPUPlanCacheBounded|TestGPUSharedGPU|TestGPUWorldOfOne|TestGPUCloseGivesBack|TestGPUProcessesPointToPoint|TestGPUPointToPoint|TestGPUAbsentRank|TestGPUKernels' > $o/suite.log 2>&1
echo "suite rc $? $(el): $(tl $o/suite.log)"
save
for i in 1 2 3 4 5 6; do
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=8s GOTRACEBACK=all timeout -s QUIT 20 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/graphs-$i.log 2>&1
  echo "graphs $i rc $? $(el): $(grep -o 'direct all-reduce, rank [0-9]: .*)' $o/graphs-$i.log | head -2 | cut -c1-200 | tr '\n' '|')"
done
save
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -b 8 -e 32M -f 4 -c 1 -d all -o all -n 2 -w 1 > $o/nt/ar.out 2>&1
echo "ar: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/nt/ar.out) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/nt/ar.out) $(el)"
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 > $o/bench/sr.out 2>&1
echo "sr rc $? $(el)"
save
echo "=== total $(el)"
awk '/^ +[0-9]+ /{printf "%s %s, ", $1, $6}' $o/bench/sr.out; echo
