// ncclalloc.c: ncclMemAlloc and ncclMemFree as a PyTorch pluggable
// allocator (torch.cuda.memory.CUDAPluggableAllocator), the way Megatron's
// and APEX's NCCL allocators wrap NCCL's. bench/pytorch/mempool_graphs.py puts DDP's
// buckets in a pool of it where PyTorch's own NCCL allocator
// (ProcessGroupNCCL.mem_allocator) refuses a GPU without multicast, as it
// does wherever NVLink multicast is off. scripts/gpu-bundle.sh builds it
// into the GPU bundle as lib/libncclalloc.so.
#include <stdio.h>

#include "nccl.h"

void* ncclalloc_alloc(size_t size, int device, cudaStream_t stream) {
  (void)device, (void)stream;
  void* p = NULL;
  ncclResult_t r = ncclMemAlloc(&p, size);
  if (r != ncclSuccess) {
    fprintf(stderr, "ncclalloc: ncclMemAlloc(%zu bytes): %s\n", size, ncclGetErrorString(r));
    return NULL;
  }
  return p;
}

void ncclalloc_free(void* p, size_t size, int device, cudaStream_t stream) {
  (void)size, (void)device, (void)stream;
  ncclResult_t r = ncclMemFree(p);
  if (r != ncclSuccess) fprintf(stderr, "ncclalloc: ncclMemFree(%p): %s\n", p, ncclGetErrorString(r));
}
