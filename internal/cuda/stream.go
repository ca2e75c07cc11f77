//go:build cuda

package cuda

/*
#include "helpers.h"
*/
import "C"

import (
	"time"
	"unsafe"
)

// Stream is a CUstream handle; 0 is the legacy default stream.
type Stream uintptr

func (s Stream) c() C.CUstream { return C.ringoStream(C.uintptr_t(s)) }

// NewStream creates a stream that does not synchronise with the default
// stream.
func (d *Device) NewStream() (Stream, error) {
	var s Stream
	err := d.Do(func() error {
		var cs C.CUstream
		if err := check("create stream", C.cuStreamCreate(&cs, C.CU_STREAM_NON_BLOCKING)); err != nil {
			return err
		}
		s = Stream(uintptr(unsafe.Pointer(cs)))
		return nil
	})
	return s, held(&live.streams, err, 1)
}

// DestroyStream releases a stream from NewStream.
func (d *Device) DestroyStream(s Stream) error {
	return held(&live.streams, d.Do(func() error { return check("destroy stream", C.cuStreamDestroy(s.c())) }), -1)
}

// StreamOwner reports whether s belongs to d's primary context. The
// default stream (0) belongs to every context.
func (d *Device) StreamOwner(s Stream) (bool, error) {
	if s == 0 {
		return true, nil
	}
	var owns bool
	err := d.Do(func() error {
		var ctx C.CUcontext
		if err := check("get a stream's context", C.cuStreamGetCtx(s.c(), &ctx)); err != nil {
			return err
		}
		var cur C.CUcontext
		if err := check("get the current context", C.cuCtxGetCurrent(&cur)); err != nil {
			return err
		}
		owns = ctx == cur
		return nil
	})
	return owns, err
}

// Query reports whether all work on s has finished; an error from earlier
// work (an illegal access, say) is returned too.
func (d *Device) Query(s Stream) (bool, error) {
	var done bool
	err := d.Do(func() error {
		r := C.cuStreamQuery(s.c())
		if r == C.CUDA_ERROR_NOT_READY {
			return nil
		}
		done = true
		return check("query stream", r)
	})
	return done, err
}

// Capturing reports whether s is being captured into a graph.
func (d *Device) Capturing(s Stream) (bool, error) {
	var st C.CUstreamCaptureStatus
	err := d.Do(func() error { return check("stream capture status", C.cuStreamIsCapturing(s.c(), &st)) })
	return st != C.CU_STREAM_CAPTURE_STATUS_NONE, err
}

// Sync waits for all work on s.
func (d *Device) Sync(s Stream) error {
	return d.Do(func() error { return check("synchronize stream", C.cuStreamSynchronize(s.c())) })
}

// Event is a CUevent handle: for timing (NewEvent) or a marker
// (NewMarker).
type Event uintptr

func (e Event) c() C.CUevent { return C.ringoEvent(C.uintptr_t(e)) }

// NewEvent creates a timing event.
func (d *Device) NewEvent() (Event, error) { return d.newEvent(C.CU_EVENT_DEFAULT) }

// NewMarker creates an event without timing, to learn when the work before
// its record has finished (Done).
func (d *Device) NewMarker() (Event, error) { return d.newEvent(C.CU_EVENT_DISABLE_TIMING) }

func (d *Device) newEvent(flags C.uint) (Event, error) {
	var e Event
	err := d.Do(func() error {
		var ce C.CUevent
		if err := check("create event", C.cuEventCreate(&ce, flags)); err != nil {
			return err
		}
		e = Event(uintptr(unsafe.Pointer(ce)))
		return nil
	})
	return e, held(&live.events, err, 1)
}

// Done reports whether the work before e's latest record has finished (an
// event never recorded is done); an error of that work is returned too.
func (d *Device) Done(e Event) (bool, error) {
	var done bool
	err := d.Do(func() error {
		r := C.cuEventQuery(e.c())
		if r == C.CUDA_ERROR_NOT_READY {
			return nil
		}
		done = true
		return check("query event", r)
	})
	return done, err
}

// DestroyEvent releases an event.
func (d *Device) DestroyEvent(e Event) error {
	return held(&live.events, d.Do(func() error { return check("destroy event", C.cuEventDestroy(e.c())) }), -1)
}

// Record records e on s.
func (d *Device) Record(e Event, s Stream) error {
	return d.Do(func() error { return check("record event", C.cuEventRecord(e.c(), s.c())) })
}

// Elapsed waits for end and returns the time between two recorded events.
func (d *Device) Elapsed(start, end Event) (time.Duration, error) {
	var ms C.float
	err := d.Do(func() error {
		if err := check("synchronize event", C.cuEventSynchronize(end.c())); err != nil {
			return err
		}
		return check("elapsed time", C.cuEventElapsedTime(&ms, start.c(), end.c()))
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}
