#!/usr/bin/env bash
# Call 2: ring and latency A/B (one file), send/recv traces, the rest of the TestGPU suite on B.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf ab.tar.xz && cd ..
A=build/ab/ringo-a B=build/ab/ringo-b
run() { # file label bin args...
  local f=$1 l=$2 b=$3; shift 3
  echo "### $l: $*" >>$OUT/$f
  timeout 120 $b bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
}
for r in 1 2 3; do
  for v in A B; do
    bin=${!v}
    run ab.txt ring-$v $bin --gpus 0,0 -coll all_reduce,all_gather,reduce_scatter,broadcast -b 1M -e 256M -f 4 -n 20 -w 5 -c 0
    run ab.txt lat-$v $bin --gpus 0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 1M -f 4 -n 200 -w 50 -c 0
  done
done
for s in 64M 1G; do
  RINGO_TRACE=$OUT/trace-$s.json run traces.txt trace-$s $B --gpus 0,0 -coll sendrecv -b $s -e $s -n 6 -w 2 -c 0
done
export RINGO_TEST_GPUS=0,0 RINGO_NVTX_INJECTION=$PWD/build/ab/libnvtx-inject.so
timeout 320 build/ab/ringo.test -test.run 'TestGPU' -test.skip 'TestGPU(AllCollectives|Kernels|PointToPoint|DirectGatherScatter|SharedGPU|WorldOfOne|Large)$' -test.v -test.timeout 310s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
grep "^--- \|^ok\|^FAIL\|rc=\|panic" $OUT/tests.txt | tail -45
ls -la $OUT
