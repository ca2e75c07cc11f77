#!/usr/bin/env bash
# Device call l1 (2026-12-03, twelfth session): what a launch costs the host. launch_cost (C, no Go) with
# grid 1 and ringo's grid of 64 blocks; the Go benchmarks of a launch and of a whole call, with a CPU profile
# of the all-reduce's; ringo bench's latency, 2 ranks, with and without the launch order, twice interleaved.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03b-launch-cost/calll1/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calll1.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for grid in 1 64; do
  timeout 120 build/repro/launch_cost --grid $grid > $o/launch-cost-grid$grid.txt 2>&1; echo "launch_cost grid $grid rc $? $(el)"
done
save
RINGO_TEST_GPUS=0,0 timeout 240 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPULaunch|BenchmarkGPUEnqueue' \
  -test.benchtime 20000x -test.benchmem > $o/bench-enqueue.txt 2>&1; echo "benchmarks rc $? $(el)"
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue/allreduce' \
  -test.benchtime 50000x -test.cpuprofile $o/ar.pprof > $o/bench-ar-profile.txt 2>&1; echo "profile rc $? $(el)"
save
for k in 1 2; do
  for ord in 1 0; do
    RINGO_LAUNCH_ORDER=$ord timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 256K -f 4 -n 200 -w 50 -c 0 > $o/lat-order$ord-$k.out 2>&1
  done
done
save
echo "=== total $(el)"
for f in $o/lat-*.out; do echo "== $(basename $f .out)"; grep -vE "^#" $f | tail -16; done
grep -E '^Benchmark' $o/bench-enqueue.txt
cat $o/launch-cost-grid1.txt $o/launch-cost-grid64.txt
