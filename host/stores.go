package host

import (
	"math/bits"
	"time"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// stores chooses, for each size class of collective, how the executor's
// copies write the FIFOs it sends into: with cached stores
// (mem.CachedCopy) or with non-temporal stores (mem.StreamCopy). Which is
// faster depends on how fast the peer's core reads lines this core holds
// modified, and on the 2-core development VM that changed while one
// watched: non-temporal copies took 2-rank all-reduces of 128 KiB–2 MiB
// from 3–4 to 8–10 GB/s in one state and cost 25–55 % in the other,
// minutes apart; once cached copies stayed cached at every length, either
// kind took half the other's time, by the state (BENCHMARKS.md, issue 25). So the executor measures, per class, each kind's call time,
// and runs the faster, trying the other exploreRun calls in a row to
// follow the machine: exploreEvery calls after a choice, then twice as
// many after each try that confirms it, up to exploreMax. A try of the
// slower kind costs its calls twice and more where the kinds differ most,
// 7 % of a 128-KiB all-reduce's time at one every 32 calls; the machine's
// states last minutes.
//
// What is timed matters as much as the choice. A call right after a change
// of kind is not timed: it pays for the lines the other kind left (after
// streamed calls the FIFOs' lines are in memory, not in a cache: 76–123 µs
// against 45–60 for a 1-MiB all-reduce), and a class's first coldCalls
// calls pay for first touches of its buffers (at 128 KiB, of 10 fresh runs:
// the first call 136–1618 µs, the second 21–221 in 4, against ~8). A kind's
// estimate is the quickest of its last keepTimes timed calls: a call is
// slowed by preemptions, interrupts and the peer's lateness, never
// quickened, so one slow call does not hold a class on the slower kind,
// while a machine that slows a kind for good shows in keepTimes calls.
// Every rank chooses alone; the kinds of store do not change what the
// ranks exchange.
type stores struct {
	classes [64]storeClass // by bits.Len of the call's bytes
}

type storeClass struct {
	calls uint64
	times [2][keepTimes]time.Duration // the last timed calls, by kind (0 cached, 1 streamed), a ring
	timed [2]uint64                   // calls timed, by kind
	last  uint8                       // the kind of the class's previous call, plus one; 0: none
	best  uint8                       // the kind chosen, plus one; 0: none yet
	gap   uint64                      // calls from a choice to the next try of the other kind
	next  uint64                      // the call that starts that try
}

const (
	// streamMinBytes is the smallest call that chooses: below, both kinds
	// took about as long in the slow state and streamed stores 2× in the
	// fast one (8–32 KiB).
	streamMinBytes = 64 << 10
	keepTimes      = 4
	coldCalls      = 2 // a class's first calls, not timed
	warmTimes      = 2 // timed calls of each kind before the first choice
	exploreEvery   = 32
	exploreMax     = 512
	exploreRun     = 2 // the first, after a change of kind, is not timed
)

// pick returns the class of a call of bytes and whether it streams; class
// −1: the call does not choose (its copies are cached).
func (s *stores) pick(bytes int64) (class int, stream bool) {
	if !mem.HasStream || bytes < streamMinBytes {
		return -1, false
	}
	class = bits.Len64(uint64(bytes))
	c := &s.classes[class]
	c.calls++
	switch {
	case c.timed[0] < warmTimes:
		return class, false
	case c.timed[1] < warmTimes:
		return class, true
	}
	if c.calls >= c.next && c.calls < c.next+exploreRun {
		return class, c.best == 1 // a try of the kind not chosen
	}
	k := uint8(1)
	if c.est(1) < c.est(0) {
		k = 2
	}
	switch {
	case k != c.best: // the first choice, or a change
		c.gap = exploreEvery
	case c.calls == c.next+exploreRun: // a try that confirmed the choice
		c.gap = min(2*c.gap, exploreMax)
	default:
		return class, k == 2
	}
	c.best, c.next = k, c.calls+c.gap
	return class, k == 2
}

// est is kind k's estimate of a call's time: the quickest of its last
// keepTimes timed calls; 0 if none was timed.
func (c *storeClass) est(k int) time.Duration {
	n := min(c.timed[k], keepTimes)
	if n == 0 {
		return 0
	}
	e := c.times[k][0]
	for _, d := range c.times[k][1:n] {
		e = min(e, d)
	}
	return e
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
	if c.last != uint8(k+1) || c.calls <= coldCalls {
		c.last = uint8(k + 1) // a change of kind, or a cold call: not timed
		return
	}
	c.times[k][c.timed[k]%keepTimes] = d
	c.timed[k]++
}
