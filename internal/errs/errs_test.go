package errs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAt(t *testing.T) {
	cause := errors.New("no route")
	e := At("init", 3, cause)
	assert.Equal(t, &Error{Op: "init", Rank: 3, Peer: -1, Channel: -1, Step: -1, Err: cause}, e)
	assert.Equal(t, "init rank 3: no route", e.Error())
	assert.ErrorIs(t, e, cause)

	e = AtDetail("allreduce", -1, "not started", ErrAborted)
	assert.Equal(t, "allreduce not started: communicator aborted", e.Error())
	assert.ErrorIs(t, e, ErrAborted)
}

func TestInvalid(t *testing.T) {
	err := Invalid("broadcast", 1, "root %d outside [0, %d)", 5, 4)
	assert.ErrorIs(t, err, ErrInvalidArgument)
	assert.EqualError(t, err, "broadcast rank 1: invalid argument: root 5 outside [0, 4)")

	err = InvalidErr("init", 0, Invalid("plan", 0, "bad"))
	assert.Equal(t, 1, strings.Count(err.Error(), "invalid argument"), "says invalid argument once: %v", err)
}
