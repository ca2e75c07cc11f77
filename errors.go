package ringo

import "github.com/ringo-ccl/ringo/internal/errs"

// Error locates a failure: operation, rank, peer, channel and step (-1 where
// they do not apply). It wraps one of the sentinels below or a context error.
type Error = errs.Error

// Sentinels for errors.Is.
var (
	ErrInvalidArgument = errs.ErrInvalidArgument // bad argument or configuration; nothing started
	ErrTimeout         = errs.ErrTimeout         // a deadline or Config.Timeout expired
	ErrAborted         = errs.ErrAborted         // the communicator was aborted or failed earlier
	ErrPeerLost        = errs.ErrPeerLost        // a peer rank went away
	ErrNotSupported    = errs.ErrNotSupported    // valid, but not possible in this build or machine
	ErrRevoked         = errs.ErrRevoked         // a rank revoked the communicator (with ErrAborted)
)
