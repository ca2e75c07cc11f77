package reduce

import "errors"

// ErrInvalid is wrapped by every validation error of this package: a bad
// datatype, operator, rank count or name. Test for it with errors.Is.
var ErrInvalid = errors.New("invalid argument")
