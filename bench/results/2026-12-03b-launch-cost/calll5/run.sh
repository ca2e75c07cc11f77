#!/usr/bin/env bash
# Device call l5 (2026-12-03, twelfth session): graph replays (ringo.Graph.Launch) numbered and ordered as calls.
# TestGPUGraphReplays (new) three times; the graph cases that hung about 1 run in 7: TestGPUDirectAllReduce/graphs
# six times and TestGPUDirectGatherScatter/graphs four, then TestGPUDirectAllReduce/graphs three times with
# RINGO_LAUNCH_ORDER=0 (no order, the replays as before); TestGPUGraphCapture, TestGPUStreams; ringo bench -G
# with 4 ranks. 2 ranks share GPU 0 unless said.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/graphs; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
cp bench/results/2026-12-03b-launch-cost/calll5/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calll5.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
run() { # run NAME SECONDS PATTERN ENV...: one test run, SIGQUIT at SECONDS
  f=$o/graphs/$1.log; local s=$2 p=$3; shift 3
  env "$@" RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT $s $g/ringo.test -test.v -test.run "$p" > $f 2>&1
  echo "$(basename $f .log) rc $? $(el): $(grep -E '^(--- |    --- )' $f | head -4 | tr '\n' ' ') $(grep -m1 -o 'waits for the start[^"]*' $f)"
}
for i in 1 2 3; do run replays-$i 60 'TestGPUGraphReplays'; done
save
for i in 1 2 3 4 5 6; do run ar-$i 20 'TestGPUDirectAllReduce/graphs'; done
save
for i in 1 2 3 4; do run gs-$i 30 'TestGPUDirectGatherScatter/graphs'; done
save
for i in 1 2 3; do run ar-unordered-$i 20 'TestGPUDirectAllReduce/graphs' RINGO_LAUNCH_ORDER=0; done
save
run capture-streams 90 'TestGPUGraphCapture|TestGPUStreams'
timeout 90 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,all_gather,sendrecv -b 8 -e 1M -f 16 -n 20 -w 5 -c 1 -G 3 > $o/bench-G-4.txt 2>&1
echo "bench -G 4 ranks rc $? $(el): $(grep -E '^ +[0-9]' $o/bench-G-4.txt | awk '{w+=$9} END {print NR " rows, wrong " w+0}')"
save
echo "=== total $(el)"
