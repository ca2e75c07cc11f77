#!/usr/bin/env bash
# Device call j3 (2026-12-03): direct reduce-scatter and all-gather (issue 22, item 3) and the hierarchical
# variant's ring-only phases, on one H200 with ranks sharing it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/bench; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj3.sh $o/run.sh
t0=$(date +%s)
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1200; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s \
  -test.run 'TestGPUDirectGatherScatter|TestGPUHierarchical|TestGPUAllCollectives|TestGPUAbsentRank|TestGPUStreams|TestGPUGraphCapture' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(res $o/tests.log)"
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUProcessesWindows|TestGPUWindows|TestGPUProcesses$' > $o/procs.log 2>&1
echo "procs rc $? $(el): $(res $o/procs.log)"
for t in all_gather reduce_scatter; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 2 -b 8 -e 16M -f 4 -c 1 -d all -o all -n 2 -w 1 > $o/nt/$t.out 2>&1
  echo "$t -d all rc $? $(el): $(grep -E 'Out of bounds|wrong' $o/nt/$t.out | tail -2 | tr '\n' ' ')"
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 2 -b 8 -e 4M -f 8 -c 1 -G 3 -n 2 -w 1 > $o/nt/$t-G.out 2>&1
  echo "$t -G 3 rc $? $(el): $(grep -E 'Out of bounds' $o/nt/$t-G.out | tr '\n' ' ')"
done
for n in 0,0 0,0,0,0; do
  for side in direct ring; do
    e=""; [ $side = ring ] && e="RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=0"
    env $e timeout 100 $g/ringo bench --gpus $n -coll reduce_scatter,all_gather -b 8 -e 16M -f 4 -n 200 -w 50 -c 0 > $o/bench/$side-$n.txt 2>&1
    echo "bench $side $n rc $? $(el)"
  done
done
tar -C $o -czf $OUT/callj3.tgz .
cd $o/bench && for f in *.txt; do echo "== $f"; grep -E '^ *[0-9]' $f | awk '{print $1, $3, $6, $10}' | head -24; done
