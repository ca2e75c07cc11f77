// Package errs holds ringo's error sentinels and its one error type, so that
// every layer (planner, transports, executors, the C ABI) reports failures the
// same way. Package ringo re-exports them; callers test with errors.Is and
// errors.As against the ringo names.
package errs

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels a caller may test for with errors.Is.
var (
	// ErrInvalidArgument: a bad argument or configuration; nothing was started.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrTimeout: a wait exceeded the context deadline or the configured timeout.
	ErrTimeout = errors.New("timed out")
	// ErrAborted: the communicator was aborted, by Abort or by an earlier failure.
	ErrAborted = errors.New("communicator aborted")
	// ErrPeerLost: a peer rank went away.
	ErrPeerLost = errors.New("peer lost")
	// ErrNotSupported: the request is valid but this build or machine cannot serve it.
	ErrNotSupported = errors.New("not supported")
	// ErrRevoked: a rank revoked the communicator (Revoke); its calls fail
	// with it (and ErrAborted) until it is shrunk or closed.
	ErrRevoked = errors.New("communicator revoked")
)

// Error locates a failure: which operation, on which rank, talking to which
// peer, on which channel and step. Fields that do not apply are -1.
type Error struct {
	Op      string // "allreduce", "init", …
	Rank    int
	Peer    int
	Channel int
	Step    int
	Detail  string // what was being done, e.g. "recvReduceSend slice 1: waiting for data"
	Err     error
}

// Error reads "op rank R chC step S detail (peer rank P): cause", leaving
// out what does not apply. It carries no "ringo: " of its own: errors nest
// (an init wrapping a bootstrap's), and a program that prints one adds its
// name once (the ringo command does).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Rank >= 0 {
		fmt.Fprintf(&b, " rank %d", e.Rank)
	}
	if e.Channel >= 0 {
		fmt.Fprintf(&b, " ch%d", e.Channel)
	}
	if e.Step >= 0 {
		fmt.Fprintf(&b, " step %d", e.Step)
	}
	if e.Detail != "" {
		b.WriteString(" ")
		b.WriteString(e.Detail)
	}
	if e.Peer >= 0 {
		fmt.Fprintf(&b, " (peer rank %d)", e.Peer)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// At returns the error err of op on rank that names no peer, channel or
// step. rank is -1 when no rank applies either.
func At(op string, rank int, err error) *Error {
	return AtDetail(op, rank, "", err)
}

// AtDetail is At with a Detail saying what was being done.
func AtDetail(op string, rank int, detail string, err error) *Error {
	return &Error{Op: op, Rank: rank, Peer: -1, Channel: -1, Step: -1, Detail: detail, Err: err}
}

// Invalid returns an ErrInvalidArgument error for op on rank.
func Invalid(op string, rank int, format string, a ...any) error {
	return At(op, rank, fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, a...)))
}

// InvalidErr returns an ErrInvalidArgument error for op on rank caused by
// err, which says "invalid argument" itself when it already wraps the
// sentinel.
func InvalidErr(op string, rank int, err error) error {
	if !errors.Is(err, ErrInvalidArgument) {
		err = fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return At(op, rank, err)
}
