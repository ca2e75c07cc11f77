#!/usr/bin/env bash
# Device call P (2026-12-02e): why 4 ranks of one process sharing GPU 0 sometimes stall in ringo bench's latency
# sweep (-w 50 -n 200; calls K and O): five runs at the default channels and five at NCCL_MAX_NCHANNELS=16, a
# stall timed out by RINGO_TIMEOUT (the GPU's wait) or dumped by SIGQUIT (the host's goroutines); then the new
# point-to-point budget default (64 for ranks sharing one GPU) through the tests and the bandwidth sweep.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/hang; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callP.sh $o/run.sh
t0=$(date +%s)
NCCL_DEBUG=INFO timeout 20 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce -b 8 -e 8 -n 5 -w 1 -c 0 > $o/info.txt 2>&1
echo "info: $(grep -m2 -iE 'share|resident' $o/info.txt | cut -c1-200 | tr '\n' ' ')"
L="-coll all_reduce,sendrecv,alltoall -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
for mode in default ch16; do
  for i in 1 2 3 4 5; do
    f=$o/hang/$mode-$i
    if [ $mode = ch16 ]; then export NCCL_MAX_NCHANNELS=16; else unset NCCL_MAX_NCHANNELS; fi
    s=$(date +%s%N)
    RINGO_TIMEOUT=12s GOTRACEBACK=all timeout -s QUIT 30 $g/ringo bench --gpus 0,0,0,0 $L > $f.out 2> $f.err
    rc=$?
    echo "$mode run $i: rc $rc $(( ($(date +%s%N) - s) / 1000000 )) ms, rows $(grep -cE '^ +[0-9]+ ' $f.out), $(grep -m1 -iE 'error|timed out|SIGQUIT' $f.err | cut -c1-400)"
  done
done
unset NCCL_MAX_NCHANNELS
echo "hang runs ($(( $(date +%s) - t0 )) s)"
RINGO_TEST_GPUS=0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint$|TestGPUScheduleAnyPeer|TestGPUSharedGPU' > $o/tests-2.log 2>&1
echo "tests 2 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-2.log | tr '\n' ' ' | cut -c1-300)"
RINGO_TEST_GPUS=0,0,0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint$|TestGPUScheduleAnyPeer' > $o/tests-4.log 2>&1
echo "tests 4 ranks rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-4.log | tr '\n' ' ' | cut -c1-300)"
B="-coll sendrecv,alltoall,gather,scatter -b 1M -e 1G -f 4 -n 20 -w 5 -c 1"
timeout 90 $g/ringo bench --gpus 0,0 $B > $o/bw-2.txt 2>&1; echo "bw 2 rc $?"
timeout 90 $g/ringo bench --gpus 0,0,0,0 $B > $o/bw-4.txt 2>&1; echo "bw 4 rc $?"
echo "bench ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callP.tgz .
for f in bw-2 bw-4; do echo "--- $f (size busbw wrong, out of place)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s/%s", $1, $8, $9}'; echo; grep -m3 -iE 'error|panic|fail' $o/$f.txt | cut -c1-300; done
for f in $o/hang/default-1 $o/hang/ch16-1; do echo "--- $f (size/us)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $f.out | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
echo "=== total $(( $(date +%s) - t0 )) s"
