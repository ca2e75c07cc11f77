// upload.cu: ringo_upload, a plan's upload. A rank copies a new plan from
// pinned host memory, which the GPU reads directly, into the plan's device
// memory with this kernel on the call's stream, ahead of the plan's own
// launch: the host does not wait for it, and it does not queue behind
// other streams' host-to-device copies on the copy engines (package
// device, Rank.plan).
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256) ringo_upload(const uint4* src, uint4* dst, uint64_t packs) {
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < packs; i += (uint64_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
