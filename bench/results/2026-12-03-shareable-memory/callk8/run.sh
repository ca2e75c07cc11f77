#!/usr/bin/env bash
# Device call k8 (2026-12-03): call k7's ordering cost 2-3 us a call at 2 ranks (its wait slept after 64 polls);
# now it spins 200 us before sleeping. The latency sweep again (2 and 4 ranks), TestGPUStreams twice.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callk8.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callk8.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
res() { grep -E '^(--- |    --- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-1500; }
for i in 1 2; do
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=40s GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s \
    -test.run 'TestGPUStreams' > $o/streams-$i.log 2>&1
  echo "streams $i rc $? $(el): $(res $o/streams-$i.log)"
done
save
$g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 4 -n 200 -w 50 -c 0 > $o/lat.out 2>&1
echo "bench rc $? $(el)"
$g/ringo bench --gpus 0,0,0,0 -coll all_reduce -b 8 -e 1M -f 4 -n 200 -w 50 -c 0 > $o/lat4.out 2>&1
echo "bench 4 rc $? $(el)"
save
echo "=== total $(el)"
cat $o/lat.out $o/lat4.out | grep -E "^# [a-z_]+$|^ +[0-9]+ "  | awk '/^#/{printf "\n%s: ", $2; next} {printf "%s=%s/%s ", $1, $6, $10} END{print ""}'
