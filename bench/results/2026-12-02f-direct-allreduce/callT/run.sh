#!/usr/bin/env bash
# Device call T (2026-12-02f): the direct all-reduce (kernels/src/direct.cu) of ranks of one process sharing
# one H200 — its tests (every type and op, unaligned, ring orders, graphs, an absent rank) and its latency
# beside the ring's (RINGO_DIRECT_MAX=0), 2 and 4 ranks, with and without CUDA graphs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/bench; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callT.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 240 $g/ringo.test -test.v -test.timeout 235s -test.run 'TestGPUDirectAllReduce|TestGPUAbsentRank|TestGPUAbortLatency|TestGPUTunerChoice|TestGPUKernels|TestGPUGraphCapture|TestGPUWorldOfOne' > $o/tests-2.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-2.log | tr '\n' ' ' | cut -c1-900)"
L="-coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 1"
run() { # name gpus env... -- extra flags
  local name=$1 gpus=$2; shift 2
  env "$@" timeout 60 $g/ringo bench --gpus $gpus $L $EXTRA > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/bench/$name.out)"
}
for n in 2 4; do
  gp=0,0; [ $n = 4 ] && gp=0,0,0,0
  EXTRA= run ring-$n $gp RINGO_DIRECT_MAX=0
  EXTRA= run direct-$n $gp RINGO_DIRECT_MAX=1M
  EXTRA= run default-$n $gp X=1
  EXTRA="-G 10" run ring-$n-G $gp RINGO_DIRECT_MAX=0
  EXTRA="-G 10" run direct-$n-G $gp RINGO_DIRECT_MAX=1M
done
EXTRA= L="-coll sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 1" run sendrecv-2 0,0 X=1
tar -C $o -czf $OUT/callT.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1.out; }
echo "size ring2 direct2 default2 ringG2 directG2 ring4 direct4 default4 ringG4 directG4 sendrecv2 (us, out of place)"
paste <(awk '/^ +[0-9]+ /{print $1}' $o/bench/ring-2.out) <(t ring-2) <(t direct-2) <(t default-2) <(t ring-2-G) <(t direct-2-G) <(t ring-4) <(t direct-4) <(t default-4) <(t ring-4-G) <(t direct-4-G) <(t sendrecv-2)
