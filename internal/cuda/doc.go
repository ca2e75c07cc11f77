// Package cuda is ringo's one door to the CUDA driver: the only importer of
// gorgonia.org/cu and of cuda.h. Everything that touches a GPU goes through
// it — devices and their primary contexts, memory, streams, events, the
// kernel module, launches, peer access, mapped host memory and pointer
// queries.
//
// It builds only with the build tag "cuda" (gorgonia.org/cu initialises the
// driver when the process starts and exits it when no GPU is present).
// Without the tag the package holds only ErrNoCUDA and the queries of
// query.go (Available, FreeMemory, DeviceName), which report that there is
// no GPU, so packages above it build and test on any machine.
//
// Contexts: a CUDA context is current per OS thread. Every method of Device
// locks the calling goroutine to its OS thread and makes the device's
// primary context current for the duration of the call, so any goroutine may
// use any device. (DESIGN.md asks for one goroutine per GPU owning its
// context; handing every launch to such a goroutine costs a goroutine
// wake-up, microseconds, on every collective — making the context current in
// the caller costs one driver call.)
package cuda

import "errors"

// ErrNoCUDA is returned by every operation of a build without the "cuda"
// tag, or on a machine without a usable GPU.
var ErrNoCUDA = errors.New("CUDA is not available: this build has no GPU support (build tag cuda) or the machine has no GPU")
