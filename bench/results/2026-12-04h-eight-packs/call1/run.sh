#!/usr/bin/env bash
# A/B of reduceCopy's 8 packs in flight for one-source moves (B) against 4 (A), ranks sharing GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf ab.tar.xz && cd ..
A=build/ab/ringo-a B=build/ab/ringo-b
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee $OUT/info.txt
run() { # label bin args...
  local l=$1 b=$2; shift 2
  echo "### $l: $*" >>$OUT/$l.out
  timeout 120 $b bench "$@" >>$OUT/$l.out 2>&1 || echo "rc=$? $l" >>$OUT/$l.out
}
for r in 1 2 3; do
  for v in A B; do
    bin=${!v}
    run bw-$v $bin --gpus 0,0 -coll sendrecv -b 16M -e 1G -f 2 -n 20 -w 5 -c 0
    run bw4-$v $bin --gpus 0,0,0,0 -coll sendrecv,alltoall -b 4M -e 1G -f 4 -n 10 -w 3 -c 0
    run ring-$v $bin --gpus 0,0 -coll all_reduce,all_gather,reduce_scatter,broadcast -b 1M -e 256M -f 4 -n 20 -w 5 -c 0
    run lat-$v $bin --gpus 0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 1M -f 4 -n 200 -w 50 -c 0
  done
  run copy $A --gpus 0 -coll sendrecv -b 16M -e 1G -f 2 -n 20 -w 5 -c 0
done
run check-B $B --gpus 0,0 -coll all_reduce,all_gather,reduce_scatter,broadcast,reduce,sendrecv,alltoall,gather,scatter -b 8 -e 64M -f 8 -d all -n 1 -w 1 -c 1
run check4-B $B --gpus 0,0,0,0 -coll all -b 8 -e 16M -f 8 -n 1 -w 1 -c 1
export RINGO_TEST_GPUS=0,0 RINGO_NVTX_INJECTION=$PWD/build/ab/libnvtx-inject.so
timeout 300 build/ab/ringo.test -test.run 'TestGPU(AllCollectives|Kernels|PointToPoint|DirectGatherScatter|SharedGPU|WorldOfOne|Large)$' -test.v -test.timeout 290s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
grep "^--- \|^ok\|^FAIL\|rc=" $OUT/tests.txt | tail -20
grep -h "wrong\|rc=" $OUT/check*.out | sort | uniq -c | sort -rn | head -5
