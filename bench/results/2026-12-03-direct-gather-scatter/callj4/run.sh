#!/usr/bin/env bash
# Device call j4 (2026-12-03): direct reduce-scatter and all-gather after call j3 — the ring-order sweep fixed
# (checked, not -error), RINGO_GATHER_DIRECT_MIN (from 3 ranks the ring below 1 MiB), processes over CUDA IPC
# (staged and windowed), the hierarchical variant once more; a second bench run of 2 and 4 ranks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/bench; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callj4.sh $o/run.sh
t0=$(date +%s)
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1500; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 200 $g/ringo.test -test.v -test.timeout 195s \
  -test.run 'TestGPUDirectGatherScatter|TestGPUHierarchical|TestGPUAllCollectives|TestGPUProcessesWindows' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(res $o/tests.log)"
for n in 0,0 0,0,0,0; do
  for side in default ring; do
    e=""; [ $side = ring ] && e="RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=0"
    env $e timeout 100 $g/ringo bench --gpus $n -coll reduce_scatter,all_gather -b 8 -e 16M -f 4 -n 200 -w 50 -c 0 > $o/bench/$side-$n.txt 2>&1
    echo "bench $side $n rc $? $(el)"
  done
done
tar -C $o -czf $OUT/callj4.tgz .
cd $o/bench && for f in *.txt; do echo "== $f"; grep -E '^ *[0-9]' $f | awk '{print $1, $3, $6, $10}' | head -24 | tr '\n' ';'; echo; done
