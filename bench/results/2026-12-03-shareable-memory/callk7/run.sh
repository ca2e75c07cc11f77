#!/usr/bin/env bash
# Device call k7 (2026-12-03): ranks of one process sharing a GPU now enqueue their collectives in order
# (calls.Table: a call waits, at most 50 ms, until the GPU's other ranks have enqueued the one before).
# TestGPUStreams with and without its first round's waits (without them 2 ranks hung in 7 runs of 8 before),
# three times; the wider shared-GPU tests once; a latency sweep beside the last sessions'.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk7.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk7.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1500; }
for i in 1 2 3; do
  env RINGO_TEST_GPUS=0 RINGO_TEST_SWEEP=40s GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s \
    -test.run 'TestGPUStreams' > $o/streams-$i.log 2>&1
  echo "streams $i rc $? $(el): $(res $o/streams-$i.log)"
done
save
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s \
  -test.run 'TestGPUAllCollectives|TestGPUSharedGPU|TestGPUPointToPoint|TestGPUSharedLateRank|TestGPUDirectGatherScatter' > $o/shared.log 2>&1
echo "shared-GPU tests rc $? $(el): $(res $o/shared.log)"
save
$g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 4 -n 200 -w 50 -c 0 > $o/lat.out 2>&1
echo "bench rc $? $(el)"
save
echo "=== total $(el)"
grep -E "^#  *[a-z]|^ +[0-9]+ " $o/lat.out | awk '/^#/{printf "\n%s: ", $2; next} {printf "%s=%s/%s ", $1, $6, $10} END{print ""}'
