#!/usr/bin/env bash
# Device call k3 (2026-12-03): is the graph-replay hang two streams sharing one hardware queue? The standalone
# model (bench/repro) with CUDA_DEVICE_MAX_CONNECTIONS=1 (every stream on one queue), and ringo's
# TestGPUDirectAllReduce/graphs with 3 queues (the fewest ringo takes for 2 ranks) and with its 32.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/repro $o/graphs; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk3.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk3.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
for q in 1 2; do
  for m in "--mode graph" "--mode eager" "--mode graph --ranks 4"; do
    f=$o/repro/q$q-$(echo $m | tr ' -' '__').log
    CUDA_DEVICE_MAX_CONNECTIONS=$q timeout -k 1 24 build/repro/graph_replays --max-seconds 20 $m > $f 2>&1
    echo "repro queues=$q $m rc $?: $(grep -E '^RESULT' $f | sed 's/RESULT //') $(el)"
  done
done
save
run() { # run NAME ENV...: TestGPUDirectAllReduce/graphs once, 15 s, then SIGQUIT
  f=$o/graphs/$1.log; shift
  env "$@" RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 15 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $f 2>&1
  echo "$(basename $f .log) rc $? $(el): $(grep -E '^(--- |    --- )' $f | head -3 | tr '\n' ' ') $(grep -m1 -o 'waits for the start[^"]*' $f)"
}
for i in 1 2 3 4 5; do run q3-$i CUDA_DEVICE_MAX_CONNECTIONS=3; done
save
for i in 1 2 3 4 5 6 7; do run q32-$i; done
save
echo "=== total $(el)"
