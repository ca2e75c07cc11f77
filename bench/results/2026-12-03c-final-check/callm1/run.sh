#!/usr/bin/env bash
# Device call m1 (2026-12-03, thirteenth session), 4c27907's bundle: every TestGPU* of the root package at
# 2 ranks on GPU 0 (the tests' global-mode captures now on one OS thread); TestGPUGraphCapture and
# TestGPUWorldOfOne five times more; capi's cuda-tagged tests; send/recv beside all-reduce, 2 ranks, 8 KiB-256 KiB,
# with the point-to-point channel budget at 64 (default on a shared GPU), 8 and 2 (NCCL_MAX_P2P_NCHANNELS).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/p2p; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/slim.tar.xz').extractall('build')" || exit 1
export RINGO_NVTX_INJECTION=$PWD/$g/libnvtx-inject.so
cp bench/results/2026-12-03c-final-check/callm1/run.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callm1.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
env RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 400 $g/ringo.test -test.v -test.timeout 395s -test.run 'TestGPU' > $o/gpu.log 2>&1
echo "gpu rc $? $(el): passed $(grep -c '^--- PASS' $o/gpu.log) failed $(grep -c '^--- FAIL' $o/gpu.log) skipped $(grep -c '^--- SKIP' $o/gpu.log)"
grep -E '^(--- FAIL|    --- FAIL|panic)' $o/gpu.log | head -10
save
for i in 1 2 3 4 5; do
  env RINGO_TEST_GPUS=0,0 timeout -s QUIT 60 $g/ringo.test -test.v -test.run 'TestGPUGraphCapture$|TestGPUWorldOfOne$' > $o/capture-$i.log 2>&1
  echo "capture-$i rc $? $(el): $(grep -E '^--- ' $o/capture-$i.log | tr '\n' ' ')"
done
save
(cd $g && timeout 120 ./capi.test -test.run 'GPU|CUDA|Cuda' -test.v > $o/capi.log 2>&1); echo "capi rc $? $(el): passed $(grep -c -- '--- PASS' $o/capi.log) failed $(grep -c -- '--- FAIL' $o/capi.log)"
save
for ch in 64 8 2 64 8 2; do
  env NCCL_MAX_P2P_NCHANNELS=$ch RINGO_LAUNCH_ORDER=0 timeout 60 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv -b 8K -e 256K -f 2 -n 300 -w 50 -c 0 >> $o/p2p/ch$ch.txt 2>&1
done
echo "p2p $(el)"
save
for ch in 64 8 2; do echo "== channels $ch (two runs): size, all-reduce us, sendrecv us"
  awk '/^# all_reduce/{c="ar"} /^# sendrecv/{c="sr"} /^ +[0-9]/{k=$1; if(c=="ar") a[k]=a[k]" "$6; else s[k]=s[k]" "$6} END{for(k in a) print k, "|", a[k], "|", s[k]}' $o/p2p/ch$ch.txt | sort -n
done
echo "=== total $(el)"
