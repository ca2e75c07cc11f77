#!/usr/bin/env bash
# Device call H (2026-12-02d): point-to-point's host side (BenchmarkGPUEnqueue; plan keys kept, no maps in a
# one-communicator SendRecv), kernel step traces of send/recv against all-reduce at 8 B, the p2p tests; the
# shrink-and-grow job with the kernel-stop log (why a survivor catches a step late), and a 0.3-s StopGrace.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/shrink $o/trace; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callH.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 120 $g/ringo.test -test.run '^$' -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 20000x -test.benchmem > $o/enqueue.txt 2>&1
echo "enqueue rc $? ($(( $(date +%s) - t0 )) s)"
S="-b 8 -e 64K -f 2 -n 200 -w 50 -c 1"
timeout 90 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv $S > $o/small-2.txt 2>&1
timeout 90 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall $S > $o/small-4.txt 2>&1
NCCL_P2P_LL_THRESHOLD=65536 timeout 90 $g/ringo bench --gpus 0,0,0,0 -coll sendrecv,alltoall $S > $o/small-4-ll64k.txt 2>&1
NCCL_P2P_LL_THRESHOLD=65536 timeout 90 $g/ringo bench --gpus 0,0 -coll sendrecv $S > $o/small-2-ll64k.txt 2>&1
R=$PWD/$g/ringo
RINGO_TRACE=$o/trace/sr.json timeout 60 $R bench --gpus 0,0 -coll sendrecv -b 8 -e 8 -n 100 -w 20 -c 0 > $o/trace/sr.txt 2>&1
RINGO_TRACE=$o/trace/ar.json timeout 60 $R bench --gpus 0,0 -coll all_reduce -b 8 -e 8 -n 100 -w 20 -c 0 > $o/trace/ar.txt 2>&1
ls -la $o/trace
echo "bench ($(( $(date +%s) - t0 )) s)"
for G in 0,0 0,0,0,0; do
  RINGO_TEST_GPUS=$G timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUPointToPoint|TestGPUProcessesPointToPoint' > $o/p2p-$G.log 2>&1
  echo "p2p tests $G rc $?: $(grep -E '^(--- |ok|FAIL|panic)' $o/p2p-$G.log | tr '\n' ' ')"
done
source /opt/torch/.venv/bin/activate
shrink() { CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$PWD/$g/lib/libnccl.so.2" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT timeout 60 python3 bench/pytorch/shrink.py --timeout 45 --steps 100 "$@"; }
for run in "2 1" "4 1" "7 1" "3 1" "2 0.3" "4 0.3" "7 0.3" "5 0.3"; do
  set -- $run; s=$1; gr=$2
  [ $(( $(date +%s) - t0 )) -gt 470 ] && break
  RINGO_STOP_GRACE=$gr shrink --seed $s > $o/shrink/seed$s-grace$gr.log 2>&1
  f=$o/shrink/seed$s-grace$gr.log
  echo "seed $s grace $gr rc $? | $(grep -h ': caught' $f | cut -c1-22 | tr '\n' ' ')| $(grep -h 'recovered in' $f | sed 's/^\[[0-9]\] //' | cut -c1-20) | $(grep -h 'grown in\|took' $f | sed 's/^\[[0-9]\] //' | cut -c1-90 | tr '\n' ' ') | $(grep -E '^(OK|FAIL)' $f | tr '\n' ' ')"
  grep -h "kernels stop" $f | sed 's/^\[[0-9]\] //' | cut -c1-160 | head -8
done
tar -C $o -czf $OUT/callH.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
grep -E '^Benchmark' $o/enqueue.txt
for f in small-2 small-4 small-2-ll64k small-4-ll64k; do echo "--- $f (size, us, busbw)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
