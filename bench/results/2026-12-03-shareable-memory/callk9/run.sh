#!/usr/bin/env bash
# Device call k9 (2026-12-03): the launch order's cost and worth, in one call: ringo bench's latency sweep with
# the order (default) and with RINGO_LAUNCH_ORDER=0, 2 and 4 ranks, twice interleaved; TestGPUStreams with
# RINGO_LAUNCH_ORDER=0 (its no-wait case hung 7 of 8 before the order), twice, 25 s each.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk9.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk9.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-900; }
for k in 1 2; do
  for ord in 1 0; do
    for gs in 0,0 0,0,0,0; do
      RINGO_LAUNCH_ORDER=$ord timeout 60 $g/ringo bench --gpus $gs -coll all_reduce -b 8 -e 1M -f 4 -n 200 -w 50 -c 0 > $o/lat-order$ord-$gs-$k.out 2>&1
    done
  done
done
save
for i in 1 2; do
  env RINGO_LAUNCH_ORDER=0 RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=15s GOTRACEBACK=all timeout -s QUIT 25 $g/ringo.test -test.v \
    -test.run 'TestGPUStreams/\[0_0\]/first_round_waited_false' > $o/streams-unordered-$i.log 2>&1
  echo "streams unordered $i rc $? $(el): $(res $o/streams-unordered-$i.log)"
done
save
echo "=== total $(el)"
for f in $o/lat-*.out; do echo "$(basename $f .out): $(grep -E '^ +[0-9]+ ' $f | awk '{printf "%s=%s/%s ", $1, $6, $10}')"; done
