#!/usr/bin/env bash
# Device call c (2026-12-02g): a rank's launches ordered across streams (a marker after every launch).
# TestGPUStreams; the graphs hang of TestGPUDirectAllReduce/graphs with a goroutine dump, and bench -G with
# no warm-up (a plan first seen inside a capture); latency after the marker; PyTorch FSDP2 (all-gather and
# reduce-scatter streams), DDP in an NCCL memory pool (pluggable allocator), DDP with every segment registered.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/c; mkdir -p $o/bench $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callc.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callc.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
rows() { echo "rows $(grep -cE '^ +[0-9]+ ' $1) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $1)"; }
run() { local name=$1 gpus=$2 lim=$3; shift 3
  env "$@" GOTRACEBACK=all timeout -s QUIT $lim $g/ringo bench --gpus $gpus $L > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? $(rows $o/bench/$name.out) $(el)"; }
RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 60 $g/ringo.test -test.v -test.timeout 58s -test.run 'TestGPUStreams' > $o/tests-streams.log 2>&1
echo "streams rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)|^    --- ' $o/tests-streams.log | tr '\n' ' ' | cut -c1-300)"
save
RINGO_TEST_SWEEP=40s RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 30 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/tests-graphs.log 2>&1
echo "graphs test rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic|SIGQUIT)|^    --- ' $o/tests-graphs.log | tr '\n' ' ' | cut -c1-300)"
save
L="-coll all_reduce -b 8M -e 8M -d int64 -o sum -n 2 -w 0 -c 3 -G 3"; run G0-ring8M 0,0 25 RINGO_TWOSHOT_MAX=4M
L="-coll all_reduce -b 2M -e 2M -d int64 -o all -n 2 -w 0 -c 3 -G 3"; run G0-two-int64 0,0 25 X=1
L="-coll all_reduce -b 28 -e 64K -f 8 -d int64 -o all -n 2 -w 0 -c 3 -G 3"; run G0-one-int64 0,0 25 X=1
save
RINGO_TEST_GPUS=0,0 timeout 90 $g/ringo.test -test.v -test.timeout 88s -test.run 'TestGPUAbsentRank|TestGPUPointToPoint|TestGPUGraphCapture|TestGPUWindows|TestGPUSharedGPU' > $o/tests.log 2>&1
echo "tests rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-400)"
L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
run sr-1 0,0 60 X=1; run sr-2 0,0 60 X=1
RINGO_TEST_GPUS=0,0 timeout 60 $g/ringo.test -test.run XXX -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 20000x > $o/enqueue.txt 2>&1
echo "enqueue: $(grep -E 'Benchmark' $o/enqueue.txt | awk '{print $1, $3}' | tr '\n' ' ')"
save
source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
trun() { timeout 90 torchrun --standalone "$@"; }
trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
for m in fsdp2 ddp-pool; do
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode $m --allocator $PWD/$g/lib/libncclalloc.so --out $o/torch/$m.csv > $o/torch/$m.log 2>&1; echo "ringo $m rc $? $(el): $(grep -E 'segments|steps|multicast' $o/torch/$m.log | head -3 | tr '\n' ' ')"
  python3 $py/compare.py $o/torch/gloo.csv $o/torch/$m.csv --rtol 1e-5 > $o/torch/compare-$m.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-$m.txt)"
  save
done
TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1 LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --out $o/torch/ddp-hook.csv > $o/torch/ddp-hook.log 2>&1; echo "ringo ddp, every segment registered, rc $? $(el)"
python3 $py/compare.py $o/torch/gloo.csv $o/torch/ddp-hook.csv --rtol 1e-5 > $o/torch/compare-ddp-hook.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-ddp-hook.txt)"
save
echo "=== total $(el)"
for f in G0-ring8M G0-two-int64 G0-one-int64; do echo "$f: $(grep -m1 -E 'goroutine|panic|timed out|SIGQUIT|error' $o/bench/$f.err)"; done
echo "all-reduce then sendrecv, 2 ranks (us), two runs:"
for f in sr-1 sr-2; do grep -E '^ +[0-9]+ ' $o/bench/$f.out | awk '{printf "%s:%s ", $1, $6} END{print ""}'; done
