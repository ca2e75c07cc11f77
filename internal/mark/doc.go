// Package mark marks a rank's calls for the tools that watch it: one NVTX
// range per call (package nvtx; a no-op without the cuda tag), from its
// entry to its end on the host path and to its enqueue on the GPU path,
// and one RINGO_TRACE event (package trace) on the rank's track. Marks are
// made with the communicator (New) and live as long as it; Start and End
// do not allocate once a call's NVTX name is registered.
package mark
