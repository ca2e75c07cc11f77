#!/usr/bin/env bash
# Device call W (2026-12-02f): pushed calls' own flag slots (an argument per parity), and ringo bench's
# barrier before a check's graph replay: the 4-rank -G 10 -c 1 sweep that hung in call V, twice with the
# direct all-reduce, once with the ring; the direct tests again.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/w; mkdir -p $o/bench; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callW.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 90 $g/ringo.test -test.v -test.timeout 85s -test.run 'TestGPUDirectAllReduce|TestGPUWindows|TestGPUProcessesWindows/P2P|TestGPUAbsentRank' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-500)"
L="-coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 1"
rb() { local name=$1 gpus=$2; shift 2
  env "$@" GOTRACEBACK=all timeout -s QUIT 45 $g/ringo bench --gpus $gpus $L $EXTRA > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/bench/$name.out) ($(( $(date +%s) - t0 )) s) $(grep -oE '_Cfunc_[A-Za-z0-9_]+' $o/bench/$name.err | sort | uniq -c | tr '\n' ' ')"
}
EXTRA="-G 10" rb direct-4-G-1 0,0,0,0 RINGO_DIRECT_MAX=1M
EXTRA="-G 10" rb direct-4-G-2 0,0,0,0 X=1
EXTRA="-G 10" rb ring-4-G 0,0,0,0 RINGO_DIRECT_MAX=0
EXTRA= rb direct-4 0,0,0,0 X=1
EXTRA= rb ring-4 0,0,0,0 RINGO_DIRECT_MAX=0
tar -C $o -czf $OUT/callW.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1.out; }
echo "size | 4 ranks: ring direct ringG directG(1M) directG(default) (us)"
paste <(awk '/^ +[0-9]+ /{print $1}' $o/bench/ring-4.out) <(t ring-4) <(t direct-4) <(t ring-4-G) <(t direct-4-G-1) <(t direct-4-G-2)
