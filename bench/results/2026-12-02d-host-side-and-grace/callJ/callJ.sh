#!/usr/bin/env bash
# Device call J (2026-12-02d): the driver's launch cost against a call's host side; CUDA graphs through
# ringo bench -G (every collective and point-to-point call, every type, checked) and nccl-tests -G on
# ringo's library; 10 trials of the GPU shrink; NCCL's answer to the shrink job on one GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/nt; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callJ.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPULaunch|BenchmarkGPUEnqueue' -test.benchtime 50000x -test.benchmem > $o/launch.txt 2>&1
echo "launch rc $? ($(( $(date +%s) - t0 )) s)"
ALL=all_reduce,reduce_scatter,all_gather,broadcast,reduce,sendrecv,alltoall,gather,scatter
timeout 150 $g/ringo bench --gpus 0,0 -coll $ALL -d all -b 8 -e 1M -f 16 -n 5 -w 2 -c 1 -G 3 > $o/graph-check-2.txt 2>&1
echo "graph check 2 ranks rc $? ($(( $(date +%s) - t0 )) s)"
timeout 100 $g/ringo bench --gpus 0,0,0,0 -coll $ALL -b 8 -e 4M -f 8 -n 5 -w 2 -c 1 -G 3 > $o/graph-check-4.txt 2>&1
echo "graph check 4 ranks rc $? ($(( $(date +%s) - t0 )) s)"
S="-b 8 -e 64K -f 2 -n 200 -w 50 -c 0"
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv $S > $o/lat-2.txt 2>&1
timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv $S -G 5 > $o/lat-2-graph.txt 2>&1
echo "latency ($(( $(date +%s) - t0 )) s)"
for t in all_reduce reduce_scatter all_gather broadcast reduce sendrecv alltoall alltoallv gather scatter hypercube; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 2 -b 8 -e 1M -f 8 -d all -n 3 -w 1 -G 3 -c 1 > $o/nt/$t-G.txt 2>&1
  echo "nccl-tests $t -G 3 rc $?: $(grep -E 'Out of bounds' $o/nt/$t-G.txt) $(grep -ciE 'error|invalid' $o/nt/$t-G.txt) error lines"
done
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -b 8 -e 64K -f 2 -n 200 -w 20 -c 0 > $o/nt/ar-lat.txt 2>&1
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -b 8 -e 64K -f 2 -n 200 -w 20 -c 0 -G 10 > $o/nt/ar-lat-G.txt 2>&1
echo "nccl-tests ($(( $(date +%s) - t0 )) s)"
[ $(( $(date +%s) - t0 )) -lt 330 ] && RINGO_TEST_GPUS=0,0 timeout 200 $g/ringo.test -test.v -test.timeout 195s -test.count 10 -test.run 'TestGPUProcessesShrink$' > $o/shrink10.log 2>&1
echo "shrink x10 rc $? ($(( $(date +%s) - t0 )) s): $(grep -c '^--- PASS' $o/shrink10.log) passed, $(grep -c '^--- FAIL' $o/shrink10.log) failed"
source /opt/torch/.venv/bin/activate
CUDA_VISIBLE_DEVICES=0 timeout 60 python3 bench/pytorch/shrink.py --timeout 45 --seed 3 --steps 100 > $o/shrink-nccl.log 2>&1
echo "shrink.py on NCCL rc $?: $(grep -m3 -iE 'duplicate|error|FAIL' $o/shrink-nccl.log | cut -c1-200 | tr '\n' ' ')"
tar -C $o -czf $OUT/callJ.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
grep -E '^Benchmark' $o/launch.txt
grep -h "kill to the first" $o/shrink10.log | awk '{print $NF}' | tr '\n' ' '; echo
for f in graph-check-2 graph-check-4; do echo "$f: rows $(grep -cE '^ +[0-9]+ ' $o/$f.txt), wrong>0 rows: $(awk '/^ +[0-9]+ /{ if (($9!="N/A" && $9>0) || ($13!="N/A" && $13>0)) n++ } END {print n+0}' $o/$f.txt); $(grep -iE 'error|fail' $o/$f.txt | head -3)"; done
for f in lat-2 lat-2-graph; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
for f in ar-lat ar-lat-G; do echo "--- nccl-tests $f: $(grep -E '^ +[0-9]+ ' $o/nt/$f.txt | awk '{printf " %s/%s", $1, $6}')"; done
