package host

import (
	"math/bits"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// stores chooses, for each size class of collective, how the executor's
// copies write the FIFOs it sends into: with cached stores (Go's copy, which
// itself turns to non-temporal stores from 1 MiB) or with non-temporal
// stores (mem.StreamCopy). Which is faster depends on how fast the peer's
// core reads lines this core holds modified, and on the 2-core development
// VM that changed while one watched: non-temporal copies took 2-rank
// all-reduces of 128 KiB–2 MiB from 3–4 to 8–10 GB/s in one state and
// cost 25–55 % in the other, minutes apart (BENCHMARKS.md, issue 25). So
// the executor measures: each class runs each kind twice, then the faster
// by a moving average of call times, trying the other kind every
// exploreEvery calls to follow the machine. Every rank chooses alone; the
// kinds of store do not change what the ranks exchange.
type stores struct {
	classes [64]storeClass // by bits.Len of the call's bytes
}

type storeClass struct {
	calls uint64
	avg   [2]time.Duration // moving average of a call's time, by kind (0 cached, 1 streamed)
	runs  [2]uint8         // calls timed, by kind, up to warmRuns
}

const (
	// streamMinBytes is the smallest call that chooses: below, both kinds
	// took about as long in the slow state and streamed stores 2× in the
	// fast one (8–32 KiB).
	streamMinBytes = 64 << 10
	warmRuns       = 2
	exploreEvery   = 16
)

// pick returns the class of a call of bytes and whether it streams; class
// −1: the call does not choose (it copies with copy).
func (s *stores) pick(bytes int64) (class int, stream bool) {
	if !mem.HasStream || bytes < streamMinBytes {
		return -1, false
	}
	class = bits.Len64(uint64(bytes))
	c := &s.classes[class]
	c.calls++
	switch {
	case c.runs[0] < warmRuns || c.runs[1] < warmRuns:
		return class, c.runs[1] < c.runs[0]
	case c.calls%exploreEvery == 0:
		return class, c.avg[1] >= c.avg[0] // the other kind
	}
	return class, c.avg[1] < c.avg[0]
}

// done records that a call of class took d with stream's kind of stores.
func (s *stores) done(class int, stream bool, d time.Duration) {
	if class < 0 {
		return
	}
	c := &s.classes[class]
	k := 0
	if stream {
		k = 1
	}
	if c.runs[k] == 0 {
		c.avg[k] = d
	} else {
		c.avg[k] = (3*c.avg[k] + d) / 4
	}
	c.runs[k] = min(c.runs[k]+1, warmRuns)
}
