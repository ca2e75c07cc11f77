#!/usr/bin/env bash
# Device call C: p2p with one channel per message up to 64 KiB (P2PMinPart); the shrink-and-grow job with bootstrap logs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callC.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 80 $g/ringo.test -test.v -test.timeout 75s -test.run 'TestGPU(PointToPoint|ProcessesPointToPoint)$' > $o/tests.log 2>&1
echo "p2p tests rc $? ($(( $(date +%s) - t0 )) s)"; grep -E '^(--- |FAIL|panic)' $o/tests.log | head
S="-b 8 -e 4M -f 2 -n 200 -w 50 -c 1"
timeout 100 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv,alltoall $S > $o/small-2.txt 2>&1
timeout 100 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall $S > $o/small-4.txt 2>&1
echo "bench ($(( $(date +%s) - t0 )) s)"
for t in sendrecv alltoallv; do RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/${t}_perf -g 4 -b 8 -e 4M -f 4 -d all -n 2 -w 1 > $o/nt-$t-g4.txt 2>&1
  echo "$t -g 4 rc $?: $(grep -cE '^ +[0-9]+ ' $o/nt-$t-g4.txt) rows, wrong: $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/nt-$t-g4.txt), $(grep 'Out of bounds' $o/nt-$t-g4.txt)"; done
source /opt/torch/.venv/bin/activate
mkdir -p $o/shrink
shrink() { CUDA_VISIBLE_DEVICES=0 LD_PRELOAD=$PWD/$g/lib/libnccl.so.2 timeout 100 python3 bench/pytorch/shrink.py --timeout 80 "$@"; }
for s in 2 4 1 3 5 6 7 8; do
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=BOOTSTRAP shrink --seed $s --steps 100 > $o/shrink/seed$s.log 2>&1
  echo "seed $s rc $? | $(grep -h 'recovered in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/shrink/seed$s.log | tr '\n' ' ')"
  [ $(( $(date +%s) - t0 )) -gt 330 ] && break
done
tar -C $o -czf $OUT/callC.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
for f in small-2 small-4; do echo "--- $f (size, us, busbw)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
