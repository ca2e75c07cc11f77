#!/usr/bin/env bash
# Device call R (2026-12-02e): where the last rank of 4 sharing GPU 0 is stuck when ringo bench's 4-rank sweep
# deadlocks in its first collective (calls K, O, P, Q): SIGQUIT's goroutine dump (no RINGO_TIMEOUT) — and whether
# CUDA's lazy module loading is the cause (CUDA_MODULE_LOADING=EAGER runs).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/sweep; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callR.sh $o/run.sh
t0=$(date +%s)
L="-coll all_reduce,sendrecv,alltoall -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
hangs=0
for i in 1 2 3 4 5 6 7 8; do
  f=$o/sweep/lazy-$i
  GOTRACEBACK=all timeout -s QUIT 15 $g/ringo bench --gpus 0,0,0,0 $L > $f.out 2> $f.err
  rc=$?
  echo "lazy $i: rc $rc rows $(grep -cE '^ +[0-9]+ ' $f.out)"
  if [ $rc != 0 ]; then
    hangs=$((hangs+1))
    echo "  cgo calls in the dump: $(grep -oE '_Cfunc_[A-Za-z0-9_]+|cuda\.\(\*Device\)\.[A-Za-z]+|device\.\(\*Rank\)\.[A-Za-z]+' $f.err | sort | uniq -c | sort -rn | head -12 | tr '\n' ' ')"
    [ $hangs -ge 2 ] && break
  fi
done
echo "lazy runs ($(( $(date +%s) - t0 )) s)"
for i in 1 2 3 4 5 6 7 8 9 10; do
  f=$o/sweep/eager-$i
  CUDA_MODULE_LOADING=EAGER RINGO_TIMEOUT=12s timeout -s QUIT 30 $g/ringo bench --gpus 0,0,0,0 $L > $f.out 2> $f.err
  echo "eager $i: rc $? rows $(grep -cE '^ +[0-9]+ ' $f.out) $(grep -m1 -iE 'error|timed out' $f.err | cut -c1-200)"
done
echo "eager runs ($(( $(date +%s) - t0 )) s)"
tar -C $o -czf $OUT/callR.tgz .
for f in $o/sweep/lazy-*.err; do if grep -q 'SIGQUIT' $f; then echo "=== $f: goroutines in cgo or cuda"; grep -B2 -A14 -E '^goroutine .*\[(syscall|running|runnable)' $f | grep -E '^goroutine|_Cfunc_|internal/cuda|device\.|ringo\.|bench\.' | head -40; break; fi; done
echo "=== total $(( $(date +%s) - t0 )) s"
