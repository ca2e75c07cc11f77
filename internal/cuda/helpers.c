//go:build cuda

#include "helpers.h"

#include <string.h>

const char* ringoErrorName(CUresult r) {
  const char* s = 0;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == 0) return "CUDA_ERROR_UNKNOWN";
  return s;
}

const char* ringoErrorString(CUresult r) {
  const char* s = 0;
  if (cuGetErrorString(r, &s) != CUDA_SUCCESS || s == 0) return "unknown error";
  return s;
}

// ringoLaunch makes ctx current on this thread and launches f with up to
// 16 eight-byte parameters: one cgo crossing per collective. With watch it
// also reports whether the stream is being captured into a graph and, when
// it is not and done is an event, records done after the launch. With
// order (an event), the stream first waits for after's latest record (an
// event, or 0 for none) and order is recorded after the launch, unless the
// stream is being captured: a rank's launches on several streams run one
// after another, in the order they were made. It returns the CUresult in
// the low 32 bits, with RINGO_LAUNCH_CAPTURED set when the stream is being
// captured and RINGO_LAUNCH_MARKED when done was recorded: no
// out-parameters, which would cost the Go caller an allocation per launch.
// With overlap the launch allows programmatic stream serialization
// (cuda.Order.Overlap): f's blocks may start as the kernel before it on the
// stream ends, and f waits for that kernel itself.
uint64_t ringoLaunch(CUcontext ctx, CUfunction f, unsigned grid, unsigned block, unsigned shmem, uintptr_t stream,
                     const uint64_t* args, int nargs, int watch, uintptr_t done, uintptr_t order, uintptr_t after, int overlap) {
  CUresult r = cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) return (uint64_t)r;
  void* params[16];
  for (int i = 0; i < nargs && i < 16; i++) params[i] = (void*)&args[i];
  uint64_t flags = 0;
  if (watch || order) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing((CUstream)stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE) flags |= RINGO_LAUNCH_CAPTURED;
  }
  if (order && after && !flags) {
    r = cuStreamWaitEvent((CUstream)stream, (CUevent)after, 0);
    if (r != CUDA_SUCCESS) return (uint64_t)r;
  }
  if (overlap) {  // programmatic dependent launch, captured too (a graph's programmatic edge)
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof(attr));
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = shmem, cfg.hStream = (CUstream)stream;
    cfg.attrs = &attr, cfg.numAttrs = 1;
    r = cuLaunchKernelEx(&cfg, f, params, 0);
  } else {
    r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, (CUstream)stream, params, 0);
  }
  if (r != CUDA_SUCCESS || flags) return (uint64_t)r | flags;
  if (watch && done && cuEventRecord((CUevent)done, (CUstream)stream) == CUDA_SUCCESS) flags |= RINGO_LAUNCH_MARKED;
  if (order) r = cuEventRecord((CUevent)order, (CUstream)stream);
  return (uint64_t)r | flags;
}

// ringoRelaxCapture sets this thread's stream capture mode to relaxed
// (relax != 0) or back to *previous, so that work that must not be
// captured (a plan's upload) can run while a stream is being captured.
CUresult ringoRelaxCapture(int relax, int* previous) {
  CUstreamCaptureMode m = relax ? CU_STREAM_CAPTURE_MODE_RELAXED : (CUstreamCaptureMode)*previous;
  CUresult r = cuThreadExchangeStreamCaptureMode(&m);
  if (relax) *previous = (int)m;
  return r;
}

CUresult ringoPointerInfo(CUdeviceptr p, int* memType, int* ordinal, CUdeviceptr* base, size_t* size) {
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  unsigned int mt = 0;
  int ord = -1;
  void* data[2] = {&mt, &ord};
  CUresult r = cuPointerGetAttributes(2, attrs, data, p);
  if (r != CUDA_SUCCESS) return r;
  *memType = (int)mt;
  *ordinal = ord;
  if (mt != CU_MEMORYTYPE_DEVICE) return CUDA_SUCCESS;
  return cuMemGetAddressRange(base, size, p);
}

CUstream ringoStream(uintptr_t s) { return (CUstream)s; }
CUevent ringoEvent(uintptr_t e) { return (CUevent)e; }
CUgraphExec ringoGraphExec(uintptr_t g) { return (CUgraphExec)g; }

// ringoCopyAsync makes ctx current and enqueues a copy of n bytes between
// device addresses on stream: one cgo crossing, capturable into a graph.
CUresult ringoCopyAsync(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, uintptr_t stream) {
  CUresult r = cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) return r;
  return cuMemcpyDtoDAsync(dst, src, n, (CUstream)stream);
}

// ringoOccupancy sets *blocks to how many blocks of block threads of f fit
// on one multiprocessor at once (no dynamic shared memory).
CUresult ringoOccupancy(CUcontext ctx, CUfunction f, int block, int* blocks) {
  CUresult r = cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) return r;
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block, 0);
}

// The virtual memory API (vmm.go). An allocation is one physical handle
// mapped once, its whole size, at an address of its own, as ncclMemAlloc's;
// the handle is released as soon as it is mapped, so unmapping frees it.

// ringoVmmAccess grants read and write access to [p, p+n) to GPU dev and,
// with peers, to every GPU that can access dev's memory.
static CUresult ringoVmmAccess(CUdeviceptr p, size_t n, CUdevice dev, int peers) {
  int count = 0;
  CUresult r = cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return r;
  for (int i = 0; i < count; i++) {
    CUdevice other;
    if ((r = cuDeviceGet(&other, i)) != CUDA_SUCCESS) return r;
    int can = other == dev;
    if (!can && peers && cuDeviceCanAccessPeer(&can, other, dev) != CUDA_SUCCESS) can = 0;
    if (!can) continue;
    CUmemAccessDesc a = {};
    a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.location.id = (int)other;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if ((r = cuMemSetAccess(p, n, &a, 1)) != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

// ringoVmmMap reserves n bytes of addresses (a multiple of the granularity),
// maps h there and grants access (ringoVmmAccess), then releases h: the
// mapping holds the memory. On failure nothing stays reserved or mapped,
// and h is released all the same.
static CUresult ringoVmmMap(CUmemGenericAllocationHandle h, size_t n, size_t align, CUdevice dev, int peers,
                            CUdeviceptr* out) {
  CUdeviceptr p = 0;
  CUresult r = cuMemAddressReserve(&p, n, align, 0, 0);
  if (r == CUDA_SUCCESS) {
    r = cuMemMap(p, n, 0, h, 0);
    if (r == CUDA_SUCCESS) {
      r = ringoVmmAccess(p, n, dev, peers);
      if (r != CUDA_SUCCESS) cuMemUnmap(p, n);
    }
    if (r != CUDA_SUCCESS) cuMemAddressFree(p, n);
  }
  cuMemRelease(h);
  if (r == CUDA_SUCCESS) *out = p;
  return r;
}

static CUresult ringoVmmProp(CUdevice dev, CUmemAllocationProp* prop, size_t* gran) {
  memset(prop, 0, sizeof(*prop));
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = (int)dev;
  prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  int rdma = 0;
  if (cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev) == CUDA_SUCCESS &&
      rdma)
    prop->allocFlags.gpuDirectRDMACapable = 1;
  return cuMemGetAllocationGranularity(gran, prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
}

CUresult ringoVmmAlloc(CUdevice dev, size_t n, CUdeviceptr* out, size_t* size) {
  int ok = 0;
  CUresult r = cuDeviceGetAttribute(&ok, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
  if (r != CUDA_SUCCESS) return r;
  if (!ok) return CUDA_ERROR_NOT_SUPPORTED;
  CUmemAllocationProp prop;
  size_t gran = 0;
  if ((r = ringoVmmProp(dev, &prop, &gran)) != CUDA_SUCCESS) return r;
  n = (n + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle h;
  if ((r = cuMemCreate(&h, n, &prop, 0)) != CUDA_SUCCESS) return r;
  *size = n;
  return ringoVmmMap(h, n, gran, dev, 1, out);
}

// ringoVmmDevice sets *dev to the GPU whose memory p is when it is memory
// of the virtual memory API (*vmm = 1), else *vmm = 0. It needs no context.
CUresult ringoVmmDevice(CUdeviceptr p, int* vmm, int* dev) {
  CUmemGenericAllocationHandle h;
  *vmm = 0;
  CUresult r = cuMemRetainAllocationHandle(&h, (void*)p);
  if (r != CUDA_SUCCESS) return CUDA_SUCCESS;  // not the virtual memory API's (cuMemAlloc's, host memory, none)
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof(prop));
  r = cuMemGetAllocationPropertiesFromHandle(&prop, h);
  cuMemRelease(h);
  if (r != CUDA_SUCCESS) return r;
  *vmm = 1;
  *dev = prop.location.id;
  return CUDA_SUCCESS;
}

// ringoVmmRange sets *base and *size to the mapping holding p. It needs a
// current context.
CUresult ringoVmmRange(CUdeviceptr p, CUdeviceptr* base, size_t* size) { return cuMemGetAddressRange(base, size, p); }

CUresult ringoVmmFree(CUdeviceptr base, size_t size) {
  CUresult r = cuMemUnmap(base, size);
  if (r != CUDA_SUCCESS) return r;
  return cuMemAddressFree(base, size);
}

CUresult ringoVmmExport(CUdeviceptr base, int* fd) {
  CUmemGenericAllocationHandle h;
  CUresult r = cuMemRetainAllocationHandle(&h, (void*)base);
  if (r != CUDA_SUCCESS) return r;
  r = cuMemExportToShareableHandle(fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  cuMemRelease(h);
  return r;
}

CUresult ringoVmmImport(CUdevice dev, int fd, size_t size, CUdeviceptr* out) {
  CUmemGenericAllocationHandle h;
  CUresult r = cuMemImportFromShareableHandle(&h, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (r != CUDA_SUCCESS) return r;
  CUmemAllocationProp prop;
  size_t gran = 0;
  if ((r = ringoVmmProp(dev, &prop, &gran)) != CUDA_SUCCESS) {
    cuMemRelease(h);
    return r;
  }
  if (size % gran != 0) gran = 0;  // the exporter's granularity: cuMemAddressReserve's default alignment
  return ringoVmmMap(h, size, gran, dev, 0, out);
}
