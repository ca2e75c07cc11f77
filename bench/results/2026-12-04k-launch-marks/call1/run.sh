#!/usr/bin/env bash
# Call 1: does the rank's marker event, recorded after every launch, cost the GPU time between kernels?
# One binary; B sets RINGO_EXP_NOMARK=1 (an experiment's toggle: no marker recorded).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TEST_GPUS=0,0
cd build && tar -xJf exp.tar.xz && cd ..
R=build/exp/ringo T=build/exp/ringo.test
run() { # file label args...
  local f=$1 l=$2; shift 2
  echo "### $l: $*" >>$OUT/$f
  if [ $l = B ]; then export RINGO_EXP_NOMARK=1; else unset RINGO_EXP_NOMARK; fi
  timeout 120 $R bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  unset RINGO_EXP_NOMARK
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >$OUT/info.txt
timeout 120 $T -test.run TestExpPeriod -test.v >$OUT/period.txt 2>&1
BW="-coll sendrecv,all_reduce -b 16M -e 256M -f 2 -n 20 -w 5 -c 0"
for r in 1 2 3; do
  if [ $r = 2 ]; then o="B A"; else o="A B"; fi
  for v in $o; do run bw.txt $v --gpus 0,0 $BW; done
  run bw.txt copy --gpus 0 -coll sendrecv -b 16M -e 256M -f 2 -n 20 -w 5 -c 0
done
for r in 1 2; do
  if [ $r = 2 ]; then o="B A"; else o="A B"; fi
  for v in $o; do run lat.txt $v --gpus 0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 4 -n 300 -w 50 -c 0; done
done
for v in A B; do
  echo "### $v" >>$OUT/enqueue.txt
  if [ $v = B ]; then export RINGO_EXP_NOMARK=1; fi
  timeout 150 $T -test.run XXX -test.bench 'GPUEnqueue/(allreduce|sendrecv)$' -test.count 3 >>$OUT/enqueue.txt 2>&1
  unset RINGO_EXP_NOMARK
done
cat $OUT/enqueue.txt | grep -E "^###|ns/op"
grep -E "us per kernel" $OUT/period.txt
awk '/^### /{l=$2} /^# (all_reduce|sendrecv)$/{c=$2} $1 ~ /^[0-9]+$/ {print l, c, $1, $6, $8}' $OUT/bw.txt $OUT/lat.txt | sort -k1,1 -k2,2 -k3n | awk '{k=$1" "$2" "$3; t[k]=t[k]" "$4; b[k]=b[k]" "$5} END{for(k in t) print k, "| t:" t[k], "| bw:" b[k]}' | sort -k2,2 -k3n -k1,1
