#!/usr/bin/env bash
# Device call l4 (2026-12-03, twelfth session): the same bundle as l3 (8896c2a's tree). PyTorch's pipeline.py
# (2 and 4 stages; l3 passed it arguments it does not take); then the C ABI's host side before (3a29801's
# library, build/ab/old) and after, interleaved four times: sendrecv_perf -g 2 and alltoall_perf -g 4, one
# thread driving ranks that share GPU 0 (each call a group over the ranks' communicators); BenchmarkGPUEnqueue twice.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/torch $o/ab; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03b-launch-cost/calll4/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calll4.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
( source /opt/torch/.venv/bin/activate
  for n in 2 4; do
    LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 100 torchrun --standalone --nproc_per_node $n bench/pytorch/pipeline.py --steps 20 > $o/torch/pipeline-$n.log 2>&1
    echo "pipeline.py $n rc $? $(el): $(grep -E '^(OK|FAIL)' $o/torch/pipeline-$n.log | head -2 | tr '\n' ' ')"
  done )
save
nt() { RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$1 timeout 60 $g/$2 "${@:3}"; }
for k in 1 2 3 4; do
  for lib in new old; do
    L=$g/lib; [ $lib = old ] && L=build/ab/old
    nt $L sendrecv_perf -g 2 -b 8 -e 128K -f 8 -n 1000 -w 100 -c 0 > $o/ab/sr-$lib-$k.txt 2>&1
    nt $L alltoall_perf -g 4 -b 64 -e 64K -f 8 -n 500 -w 50 -c 0 > $o/ab/a2a-$lib-$k.txt 2>&1
  done
done
save
for k in 1 2; do
  RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 20000x -test.benchmem > $o/bench-enqueue-$k.txt 2>&1; echo "benchmarks $k rc $? $(el)"
done
save
echo "=== total $(el)"
grep -hE '^Benchmark' $o/bench-enqueue-*.txt
for f in $o/ab/*.txt; do echo "$(basename $f .txt): $(awk '$1 ~ /^[0-9]+$/ {printf "%s=%s ", $1, $6}' $f)"; done
