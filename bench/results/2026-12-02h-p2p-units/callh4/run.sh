#!/usr/bin/env bash
# Device call h4 (2026-12-02h): TestGPUStreams as committed (round 0 waits for each call) x3 with plans uploaded
# by ringo_upload; send/recv latency beside all-reduce x2; send/recv bandwidth at 2 ranks beside one copy.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/bench; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh4.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callh4.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
tl() { grep -E '^(--- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-400; }
for i in 1 2 3; do
  env RINGO_TEST_GPUS=0,0 RINGO_TEST_SWEEP=15s GOTRACEBACK=all timeout -s QUIT 40 $g/ringo.test -test.v -test.run 'TestGPUStreams' > $o/streams-$i.log 2>&1
  echo "streams $i rc $? $(el): $(tl $o/streams-$i.log)"
done
save
for i in 1 2; do
  timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 > $o/bench/sr-$i.out 2>&1; echo "sr $i rc $? $(el)"
done
timeout 60 $g/ringo bench --gpus 0 -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 0 > $o/bench/copy.out 2>&1; echo "copy rc $? $(el)"
timeout 60 $g/ringo bench --gpus 0,0 -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 1 > $o/bench/bw-2.out 2>&1; echo "bw rc $? $(el)"
save
echo "=== total $(el)"
for f in copy bw-2; do echo "$f: $(awk '/^ +[0-9]+ /{printf "%s %s (wrong %s), ", $1, $8, $9}' $o/bench/$f.out)"; done
for i in 1 2; do awk '/^ +[0-9]+ /{printf "%s %s, ", $1, $6}' $o/bench/sr-$i.out; echo; done
