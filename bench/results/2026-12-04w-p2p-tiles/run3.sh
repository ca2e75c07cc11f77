#!/usr/bin/env bash
# Third call: every kernel loaded when the rank's GPU is set up (LoadKernels resolves each, and a kernel's
# lookup asks an attribute, which loads a lazily loaded one). TestGPUBackToBack in fresh processes: this
# build (N) 6 times, the commit before tiles (O) with CUDA_MODULE_LOADING=EAGER 3 times and plain once;
# then the whole TestGPU* suite on this build (run.sh's test stage), ranks sharing GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=20s
tar -xJf build/exp2/slim14.tar.xz -C build
g=build/gpu
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
b2b() { local tag=$1 bin=$2; shift 2
  env "$@" RINGO_TEST_GPUS=0,0 timeout 25 $bin -test.run 'TestGPUBackToBack$' -test.v >$OUT/b2b-last.txt 2>&1; local rc=$?
  echo "b2b $tag rc=$rc $(grep -c -- '--- PASS' $OUT/b2b-last.txt) passed $(el)" | tee -a $OUT/b2b.txt; }
for i in 1 2 3; do b2b N $g/ringo.test; b2b O-eager $g/ringo-old.test CUDA_MODULE_LOADING=EAGER; b2b N $g/ringo.test; done
b2b O-lazy $g/ringo-old.test
RINGO_TEST_GPUS=0,0 RINGO_TEST_TIMEOUT=$(( 585 - $(date +%s) + t0 )) bash $g/run.sh $OUT test 2>&1 | tail -8
echo "suite $(el)"
