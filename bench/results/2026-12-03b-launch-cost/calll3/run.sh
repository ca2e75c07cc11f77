#!/usr/bin/env bash
# Device call l3 (2026-12-03, twelfth session): the bundle with a launch and the C ABI's sends and receives
# allocation-free. Checks: capi's cuda-tagged tests and gpu_smoke; the root package's GPU point-to-point tests and
# TestGPUDirectGatherScatter again (its graphs case hung in l2); nccl-tests' p2p binaries, every type, ranks sharing
# GPU 0; PyTorch p2p.py (2 and 4 processes), the MoE model and the pipeline against Gloo. Then the host side, before
# and after: BenchmarkGPUEnqueue; sendrecv_perf and all_reduce_perf -g 2 latency on this library and on 3a29801's
# (build/ab/old), interleaved, twice each.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/torch $o/nt $o/ab; g=build/gpu
# build/slim.tar.xz: the bundle's gpu/ less what this call does not run (the 64-MiB carry), and build/ab/old
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03b-launch-cost/calll3/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calll3.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |ok|FAIL|panic)' $1 | grep -v -- '--- PASS' | tr '\n' ' ' | cut -c1-500; }
[ -e build/lib ] || ln -s gpu/lib build/lib
(cd capi && RINGO_TEST_GPUS=0,0 timeout 150 ../$g/capi.test -test.v -test.timeout 140s > $o/capi.log 2>&1); echo "capi.test rc $? $(el): $(grep -c -- '--- PASS' $o/capi.log) passed; $(res $o/capi.log)"
timeout 60 $g/lib/gpu_smoke > $o/gpu_smoke.log 2>&1; echo "gpu_smoke rc $?: $(tail -1 $o/gpu_smoke.log)"
RINGO_TEST_GPUS=0,0 timeout 200 $g/ringo.test -test.v -test.run 'TestGPUPointToPoint|TestGPUDirectGatherScatter|TestGPUProcessesPointToPoint' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(grep -c -- '--- PASS' $o/tests.log) passed; $(res $o/tests.log)"
save
nt() { RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$1 timeout 60 $g/$2 "${@:3}"; }
for b in "sendrecv_perf -g 2" "alltoall_perf -g 4" "alltoallv_perf -g 4" "gather_perf -g 4" "scatter_perf -g 4" "hypercube_perf -g 4"; do
  set -- $b; nt $g/lib $1 $2 $3 -b 64 -e 4M -f 16 -d all -n 3 -w 1 -c 1 > $o/nt/$1.txt 2>&1
  echo "$1 rc $?: wrong $(awk '$1 ~ /^[0-9]+$/ {w+=$9+$13; n++} END {print w+0 " in " n " rows"}' $o/nt/$1.txt)"
done
save
( source /opt/torch/.venv/bin/activate
  py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
  trun() { timeout 100 torchrun --standalone "$@"; }
  for n in 2 4; do
    LD_PRELOAD=$LP trun --nproc_per_node $n $py/p2p.py > $o/torch/p2p-$n.log 2>&1; echo "p2p.py $n rc $?: $(grep -c '^OK' $o/torch/p2p-$n.log) OK, $(grep -c '^FAIL' $o/torch/p2p-$n.log) FAIL $(el)"
  done
  for m in moe pipeline; do
    trun --nproc_per_node 2 $py/$m.py --steps 20 --backend gloo --out $o/torch/$m-gloo.csv > $o/torch/$m-gloo.log 2>&1; echo "$m gloo rc $? $(el)"
    LD_PRELOAD=$LP trun --nproc_per_node 2 $py/$m.py --steps 20 --out $o/torch/$m-ringo.csv > $o/torch/$m-ringo.log 2>&1; echo "$m ringo rc $? $(el)"
    python3 $py/compare.py $o/torch/$m-gloo.csv $o/torch/$m-ringo.csv > $o/torch/compare-$m.txt 2>&1; echo "$m vs gloo rc $?: $(head -1 $o/torch/compare-$m.txt)"
  done )
save
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue|BenchmarkGPULaunch' -test.benchtime 20000x -test.benchmem > $o/bench-enqueue.txt 2>&1; echo "benchmarks rc $? $(el)"
for k in 1 2; do
  for lib in new old; do
    L=$g/lib; [ $lib = old ] && L=build/ab/old
    nt $L sendrecv_perf -g 2 -b 8 -e 256K -f 4 -n 200 -w 50 -c 0 > $o/ab/sr-$lib-$k.txt 2>&1
    nt $L all_reduce_perf -g 2 -b 8 -e 256K -f 4 -n 200 -w 50 -c 0 > $o/ab/ar-$lib-$k.txt 2>&1
  done
done
save
echo "=== total $(el)"
grep -E '^Benchmark' $o/bench-enqueue.txt
for f in $o/ab/*.txt; do echo "$(basename $f .txt): $(awk '$1 ~ /^[0-9]+$/ {printf "%s=%s ", $1, $6}' $f)"; done
