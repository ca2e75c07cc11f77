package tcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// ALongTimeAgo is a deadline in the past: set on a connection, it makes
// the calls blocked on it return at once.
var ALongTimeAgo = time.Unix(1, 0)

// Deadliner is what Bind binds: a connection or a listener.
type Deadliner interface{ SetDeadline(time.Time) error }

// Bind makes ds' deadlines follow ctx: its deadline now (none if it has
// none), a past one as soon as ctx ends. release stops the latter, waiting
// for it if it had started, so that a later Bind is not overridden.
func Bind(ctx context.Context, ds ...Deadliner) (release func()) {
	dl, _ := ctx.Deadline()
	for _, d := range ds {
		d.SetDeadline(dl)
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		for _, d := range ds {
			d.SetDeadline(ALongTimeAgo)
		}
	})
	return func() {
		if !stop() {
			<-done
		}
	}
}

// Ended returns nil while ctx runs, then why it ended: errs.ErrTimeout
// wrapping context.DeadlineExceeded, or its cause (a loss, a Close, or
// context.Canceled).
func Ended(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", errs.ErrTimeout, cause)
	}
	return cause
}

// EndedBy is Ended, for an I/O error err on a connection bound to ctx
// (Bind): a deadline error there means that ctx ended or is about to (the
// network poller's timer and ctx's may fire a little apart), so it waits
// briefly for ctx to catch up.
func EndedBy(ctx context.Context, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t := time.NewTimer(50 * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return Ended(ctx)
}
