#!/usr/bin/env bash
# Device call h2 (2026-12-02h): a direct all-reduce's timeout names what its blocks waited for (TestGPUAbsentRank);
# TestGPUStreams x3 without round-0 waits; TestGPUDirectAllReduce/graphs x8 with an 8-s sweep deadline, so a hang
# ends in an error naming the stalled blocks; plans uploaded on the call's stream under the wider GPU suite
# (collectives, graphs, the plan cache, shared GPU, world of one, close); nccl-tests all_reduce/sendrecv -G.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh2.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callh2.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
tl() { grep -E '^(--- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-700; }
T="RINGO_TEST_GPUS=0,0 GOTRACEBACK=all"
env RINGO_TEST_GPUS=0,0 timeout -s QUIT 40 $g/ringo.test -test.v -test.run 'TestGPUAbsentRank' > $o/absent.log 2>&1
echo "absent rc $? $(el): $(tl $o/absent.log) | $(grep -o 'direct all-reduce, rank 0: block 0[^;)]*' $o/absent.log | head -2 | tr '\n' '|')"
for i in 1 2 3; do
  env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 40 $g/ringo.test -test.v -test.run 'TestGPUStreams' > $o/streams-$i.log 2>&1
  echo "streams $i rc $? $(el)"
done
save
for i in 1 2 3 4 5 6 7 8; do
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=8s GOTRACEBACK=all timeout -s QUIT 20 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/graphs-$i.log 2>&1
  echo "graphs $i rc $? $(el): $(grep -o 'direct all-reduce, rank [0-9]: [^)]*' $o/graphs-$i.log | head -4 | cut -c1-300 | tr '\n' '|')"
done
save
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 200 $g/ringo.test -test.v -test.timeout 195s -test.run 'TestGPUAllCollectives|TestGPUGraphCapture|TestGPUPlanCacheBounded|TestGPUSharedGPU|TestGPUWorldOfOne|TestGPUCloseGivesBack|TestGPUBidirectional|TestGPUProcessesPointToPoint' > $o/suite.log 2>&1
echo "suite rc $? $(el): $(tl $o/suite.log)"
save
nt() { local name=$1 bin=$2; shift 2
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/$bin "$@" > $o/nt/$name.out 2>&1
  echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/nt/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/nt/$name.out) $(el)"; }
nt ar-G all_reduce_perf -g 2 -b 8 -e 8M -f 8 -c 1 -G 5 -d all
nt sr-G sendrecv_perf -g 2 -b 8 -e 64M -f 8 -c 1 -G 5
nt a2a-G alltoall_perf -g 4 -b 64 -e 64M -f 8 -c 1 -G 3
save
echo "=== total $(el)"
