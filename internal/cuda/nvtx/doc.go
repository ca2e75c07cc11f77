// Package nvtx marks ringo's collectives as NVTX ranges, so that Nsight
// Systems (or any NVTX tool) shows them on its timeline beside the kernels.
// It is the only user of the NVTX headers (nvtx3, header-only): a tool
// attaches through NVTX_INJECTION64_PATH, which nsys sets; without one every
// call is a no-op behind a function pointer.
//
// Ranges are start/end ranges in the domain "ringo", not push/pop: a
// goroutine may move between OS threads between a range's start and end.
// Each carries a registered message (the caller's, e.g. "AllReduce float32
// sum"), a color, a category (ringo uses one per rank, named "rank N") and a
// 64-bit payload (ringo's: the call's bytes). NCCL_NVTX_DISABLE=1 (or
// RINGO_NVTX_DISABLE=1) turns them off, as in NCCL.
//
// It builds its NVTX calls only with the build tag "cuda" (the GPU build,
// where Nsight is used); without the tag every function is a no-op.
package nvtx
