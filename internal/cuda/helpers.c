//go:build cuda

#include "helpers.h"

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
// also reports whether the stream is being captured into a graph
// (*captured) and, when it is not and done is an event, records done after
// the launch (*marked is whether that worked). With order (an event), the
// stream first waits for after's latest record (an event, or 0 for none)
// and order is recorded after the launch, unless the stream is being
// captured (*captured then says so): a rank's launches on several streams
// run one after another, in the order they were made.
CUresult ringoLaunch(CUcontext ctx, CUfunction f, unsigned grid, unsigned block, unsigned shmem, uintptr_t stream,
                     const uint64_t* args, int nargs, int watch, uintptr_t done, uintptr_t order, uintptr_t after,
                     int* captured, int* marked) {
  CUresult r = cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) return r;
  void* params[16];
  for (int i = 0; i < nargs && i < 16; i++) params[i] = (void*)&args[i];
  *captured = 0;
  *marked = 0;
  if (watch || order) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing((CUstream)stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE) *captured = 1;
  }
  if (order && after && !*captured) {
    r = cuStreamWaitEvent((CUstream)stream, (CUevent)after, 0);
    if (r != CUDA_SUCCESS) return r;
  }
  r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, (CUstream)stream, params, 0);
  if (r != CUDA_SUCCESS || *captured) return r;
  if (watch && done) *marked = cuEventRecord((CUevent)done, (CUstream)stream) == CUDA_SUCCESS;
  if (order) r = cuEventRecord((CUevent)order, (CUstream)stream);
  return r;
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
