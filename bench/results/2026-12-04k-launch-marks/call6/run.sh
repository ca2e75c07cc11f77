#!/usr/bin/env bash
# Call 6: the whole TestGPU suite on one H200, ranks sharing GPU 0, with the overlapped launches on (the default),
# through run.sh's test stage (which sets the NVTX recorder).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TEST_GPUS=0,0 RINGO_TEST_TIMEOUT=465
cd build && tar -xJf slim6.tar.xz && cd ..
bash build/gpu/run.sh $OUT test 2>&1 | tail -60
