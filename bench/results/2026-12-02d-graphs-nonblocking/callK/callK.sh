#!/usr/bin/env bash
# Device call K (2026-12-02d): CUDA graphs again (relaxed capture): ringo bench -G over every collective and
# point-to-point call, checked, and its latency; nccl-tests' p2p -G with ringo's WARN; PyTorch on non-blocking
# communicators (TORCH_NCCL_USE_COMM_NONBLOCKING=1); the host side's allocations.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt $o/torch; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callK.sh $o/run.sh
t0=$(date +%s)
ALL=all_reduce,reduce_scatter,all_gather,broadcast,reduce,sendrecv,alltoall,gather,scatter
timeout 150 $g/ringo bench --gpus 0,0 -coll $ALL -d all -b 8 -e 1M -f 16 -n 5 -w 2 -c 1 -G 3 > $o/graph-check-2.txt 2>&1
echo "graph check 2 ranks rc $? ($(( $(date +%s) - t0 )) s)"
timeout 100 $g/ringo bench --gpus 0,0,0,0 -coll $ALL -b 8 -e 4M -f 8 -n 5 -w 2 -c 1 -G 3 > $o/graph-check-4.txt 2>&1
echo "graph check 4 ranks rc $? ($(( $(date +%s) - t0 )) s)"
S="-b 8 -e 64K -f 2 -n 200 -w 50 -c 0"
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv $S -G 5 > $o/lat-2-graph.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv $S > $o/lat-2.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall $S -G 5 > $o/lat-4-graph.txt 2>&1
echo "latency ($(( $(date +%s) - t0 )) s)"
for t in sendrecv alltoall alltoallv; do
  NCCL_DEBUG=WARN RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 2 -b 8 -e 1M -f 8 -d all -n 3 -w 1 -G 3 -c 1 > $o/nt/$t-G.txt 2>&1
  echo "nccl-tests $t -G 3 rc $?: $(grep -E 'Out of bounds' $o/nt/$t-G.txt) | $(grep -m3 -iE 'warn|error' $o/nt/$t-G.txt | cut -c1-300 | tr '\n' ' ')"
done
RINGO_TEST_GPUS=0,0 timeout 60 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 50000x -test.benchmem > $o/enqueue.txt 2>&1
echo "enqueue ($(( $(date +%s) - t0 )) s)"
source /opt/torch/.venv/bin/activate
py=bench/pytorch
run() { timeout 150 torchrun --standalone "$@"; }
export TORCH_NCCL_USE_COMM_NONBLOCKING=1
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 run --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "nonblocking collectives.py 2 ranks rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL"
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 run --nproc_per_node 4 $py/collectives.py > $o/torch/collectives-4.log 2>&1; echo "nonblocking collectives.py 4 ranks rc $?: $(grep -c '^OK' $o/torch/collectives-4.log) OK, $(grep -c '^FAIL' $o/torch/collectives-4.log) FAIL"
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 run --nproc_per_node 2 $py/p2p.py > $o/torch/p2p-2.log 2>&1; echo "nonblocking p2p.py 2 ranks rc $?: $(grep -c '^OK' $o/torch/p2p-2.log) OK, $(grep -c '^FAIL' $o/torch/p2p-2.log) FAIL"
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-nb.csv > $o/torch/ddp-2.log 2>&1; echo "nonblocking ddp_train.py rc $?"
CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$PWD/$g/lib/libnccl.so.2" timeout 60 python3 $py/shrink.py --timeout 45 --seed 3 --steps 100 > $o/torch/shrink-nb.log 2>&1
echo "nonblocking shrink.py rc $?: $(grep -h 'recovered in\|grown in\|took' $o/torch/shrink-nb.log | cut -c1-80 | tr '\n' ' ') $(grep -E '^(OK|FAIL)' $o/torch/shrink-nb.log)"
unset TORCH_NCCL_USE_COMM_NONBLOCKING
LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-b.csv > $o/torch/ddp-b.log 2>&1; echo "blocking ddp_train.py rc $?"
python3 $py/compare.py $o/torch/ddp-b.csv $o/torch/ddp-nb.csv > $o/torch/compare.txt 2>&1; echo "compare rc $?: $(tail -2 $o/torch/compare.txt | tr '\n' ' ')"
tar -C $o -czf $OUT/callK.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
grep -E '^Benchmark' $o/enqueue.txt
for f in graph-check-2 graph-check-4; do echo "$f: rows $(grep -cE '^ +[0-9]+ ' $o/$f.txt), wrong>0 rows: $(awk '/^ +[0-9]+ /{ if (($9!="N/A" && $9>0) || ($13!="N/A" && $13>0)) n++ } END {print n+0}' $o/$f.txt); $(grep -m3 -iE 'error|fail|panic' $o/$f.txt | cut -c1-300)"; done
for f in lat-2 lat-2-graph lat-4-graph; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
