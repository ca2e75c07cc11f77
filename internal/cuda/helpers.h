// helpers.h: the C half of package cuda's thin bindings: what
// gorgonia.org/cu lacks or does expensively.
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

const char* ringoErrorName(CUresult r);
const char* ringoErrorString(CUresult r);
#define RINGO_LAUNCH_CAPTURED (1ull << 32)  // ringoLaunch's result: the stream is being captured
#define RINGO_LAUNCH_MARKED (1ull << 33)    // ringoLaunch's result: done was recorded
uint64_t ringoLaunch(CUcontext ctx, CUfunction f, unsigned grid, unsigned block, unsigned shmem, uintptr_t stream,
                     const uint64_t* args, int nargs, int watch, uintptr_t done, uintptr_t order, uintptr_t after, int overlap);
CUresult ringoRelaxCapture(int relax, int* previous);
CUresult ringoCopyAsync(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, uintptr_t stream);
CUresult ringoOccupancy(CUcontext ctx, CUfunction f, int block, int* blocks);
CUresult ringoPointerInfo(CUdeviceptr p, int* memType, int* ordinal, CUdeviceptr* base, size_t* size);
CUstream ringoStream(uintptr_t s);
CUevent ringoEvent(uintptr_t e);
CUgraphExec ringoGraphExec(uintptr_t g);
CUresult ringoVmmAlloc(CUdevice dev, size_t n, CUdeviceptr* out, size_t* size);
CUresult ringoVmmDevice(CUdeviceptr p, int* vmm, int* dev);
CUresult ringoVmmRange(CUdeviceptr p, CUdeviceptr* base, size_t* size);
CUresult ringoVmmFree(CUdeviceptr base, size_t size);
CUresult ringoVmmExport(CUdeviceptr base, int* fd);
CUresult ringoVmmImport(CUdevice dev, int fd, size_t size, CUdeviceptr* out);
