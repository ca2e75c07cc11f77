#!/usr/bin/env bash
# Device call D (2026-12-02c): kernels.Grid's effect on point-to-point latency; the shrink-and-grow job with
# a libc close() spy and cleanup-phase logs (who closes the shrunk communicator's root connections?).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callD.sh $o/run.sh
t0=$(date +%s)
S="-b 8 -e 1M -f 2 -n 200 -w 50 -c 1"
timeout 90 $g/ringo bench --gpus 0,0 -coll all_reduce,sendrecv,alltoall $S > $o/small-2.txt 2>&1
timeout 90 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall $S > $o/small-4.txt 2>&1
echo "bench ($(( $(date +%s) - t0 )) s)"
source /opt/torch/.venv/bin/activate
mkdir -p $o/shrink
spy=$PWD/build/closespy.so
gcc -shared -fPIC -O1 -o /tmp/closespy.so build/closespy.c -ldl 2>/dev/null && spy=/tmp/closespy.so
shrink() { CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$spy $PWD/$g/lib/libnccl.so.2" timeout 100 python3 bench/pytorch/shrink.py --timeout 80 "$@"; }
for s in 1 2 7 3 4; do
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP shrink --seed $s --steps 100 > $o/shrink/seed$s.log 2>&1
  echo "seed $s rc $? | $(grep -h 'recovered in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/shrink/seed$s.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/shrink/seed$s.log | tr '\n' ' ')"
  echo "  closespy: $(grep -c closespy $o/shrink/seed$s.log) socket closes through libc"
  [ $(( $(date +%s) - t0 )) -gt 420 ] && break
done
tar -C $o -czf $OUT/callD.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
for f in small-2 small-4; do echo "--- $f (size, us, busbw)"; grep -E '^# [a-z_]+$|^ +[0-9]+ ' $o/$f.txt | awk '/^#/{printf "\n%s:", $2; next} {printf " %s/%s", $1, $6}'; echo; done
