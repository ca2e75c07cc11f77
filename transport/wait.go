package transport

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/sys"
)

// Abort is a flag that stops every wait that watches it, carrying the cause.
// The zero value is not set. It is safe for concurrent use.
type Abort struct {
	set   atomic.Bool
	cause atomic.Pointer[error]
}

// Set raises the flag with cause; the first cause wins. It reports whether
// this call raised it.
func (a *Abort) Set(cause error) bool {
	if !a.cause.CompareAndSwap(nil, &cause) {
		return false
	}
	a.set.Store(true)
	return true
}

// IsSet reports whether the flag is up.
func (a *Abort) IsSet() bool { return a.set.Load() }

// Err returns nil, or ErrAborted wrapped with the cause.
func (a *Abort) Err() error {
	if !a.set.Load() {
		return nil
	}
	return fmt.Errorf("%w: %w", errs.ErrAborted, *a.cause.Load())
}

// Bell lets the consumer of a counter or flag sleep until its producer's
// next post: two 32-bit words in the connection's memory, a sequence number
// the consumer sleeps on with a futex and a count of sleepers, so it works
// between processes as well as goroutines. The producer calls Ring after
// every post; it costs one atomic load unless someone sleeps.
type Bell struct {
	seq, sleepers *atomic.Uint32
}

// Ring wakes the sleeper, if any.
func (b Bell) Ring() {
	if b.sleepers.Load() != 0 {
		b.seq.Add(1)
		sys.FutexWake(b.seq, 1)
	}
}

// Waiter bounds the waits of one collective call. A wait polls, then yields
// the processor between polls, then — when the value is still not there,
// which happens when ranks outnumber cores — sleeps on the producer's Bell,
// a tick at a time. Between naps it checks the aborts, the context and the
// deadline, so no wait outlives them by more than a tick. A Waiter is set up
// per call with Reset and shared by the goroutines of that call; it does not
// allocate.
type Waiter struct {
	ctx      context.Context
	done     <-chan struct{}
	deadline time.Time // zero: none beyond ctx
	timeout  time.Duration
	aborts   [2]*Abort
}

// Reset prepares w for a call: ctx is honoured; if ctx has no deadline,
// timeout (if > 0) bounds the call instead. aborts (nil entries ignored) stop
// the wait when raised.
func (w *Waiter) Reset(ctx context.Context, timeout time.Duration, aborts ...*Abort) {
	*w = Waiter{ctx: ctx, done: ctx.Done(), timeout: timeout}
	if _, ok := ctx.Deadline(); !ok && timeout > 0 {
		w.deadline = time.Now().Add(timeout)
	}
	copy(w.aborts[:], aborts)
}

const (
	spinPolls  = 64               // polls before yielding the processor
	yieldPolls = 2048             // polls before sleeping on the bell
	checkEvery = 256              // yielding polls between checks of aborts, context and deadline
	tick       = time.Millisecond // a sleeper's longest nap between checks
)

// WaitAtLeast waits until c holds at least want.
func (w *Waiter) WaitAtLeast(c *atomic.Uint64, want uint64, bell Bell) error {
	for n := 0; c.Load() < want; n++ {
		if n < yieldPolls {
			if err := w.pause(n); err != nil {
				return err
			}
			continue
		}
		bell.sleepers.Add(1)
		tok := bell.seq.Load()
		if c.Load() < want {
			sys.FutexWait(bell.seq, tok, tick)
		}
		bell.sleepers.Add(^uint32(0))
		if err := w.Check(); err != nil {
			return err
		}
	}
	return nil
}

// WaitFlag waits until the high 32 bits of word equal flag and returns the
// word.
func (w *Waiter) WaitFlag(word *atomic.Uint64, flag uint32, bell Bell) (uint64, error) {
	for n := 0; ; n++ {
		v := word.Load()
		if uint32(v>>32) == flag {
			return v, nil
		}
		if n < yieldPolls {
			if err := w.pause(n); err != nil {
				return 0, err
			}
			continue
		}
		bell.sleepers.Add(1)
		tok := bell.seq.Load()
		if uint32(word.Load()>>32) != flag {
			sys.FutexWait(bell.seq, tok, tick)
		}
		bell.sleepers.Add(^uint32(0))
		if err := w.Check(); err != nil {
			return 0, err
		}
	}
}

// pause is called after the n-th unsuccessful poll while spinning or
// yielding.
func (w *Waiter) pause(n int) error {
	if n < spinPolls {
		return nil
	}
	if n%checkEvery == 0 {
		if err := w.Check(); err != nil {
			return err
		}
	}
	runtime.Gosched()
	return nil
}

// Check returns the error that ends the call now, if any.
func (w *Waiter) Check() error {
	for _, a := range w.aborts {
		if a != nil && a.IsSet() {
			return a.Err()
		}
	}
	select {
	case <-w.done:
		err := w.ctx.Err()
		if err == context.DeadlineExceeded {
			return fmt.Errorf("%w: %w", errs.ErrTimeout, err)
		}
		return err
	default:
	}
	if !w.deadline.IsZero() && time.Now().After(w.deadline) {
		return fmt.Errorf("%w after %v", errs.ErrTimeout, w.timeout)
	}
	return nil
}
