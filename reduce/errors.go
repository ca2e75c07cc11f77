package reduce

import "github.com/ringo-ccl/ringo/internal/errs"

// ErrInvalid is wrapped by every validation error of this package: a bad
// datatype, operator, rank count or name. Test for it with errors.Is. It is
// ringo's ErrInvalidArgument, so that an error wrapping one of these says
// "invalid argument" once.
var ErrInvalid = errs.ErrInvalidArgument
