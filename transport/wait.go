package transport

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
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
//
// The zero Bell is polled: its sleepers yield, then sleep a few
// microseconds at a time (pollNap), since the other end — a GPU — never
// rings (ConnView).
//
// A Bell whose both ends are in this process (a net connection's, between
// the executor and a proxy) parks the sleeping goroutine on a channel
// instead: a goroutine asleep in a futex holds its thread and processor,
// and Go's scheduler then notices ready sockets late.
type Bell struct {
	seq, sleepers *atomic.Uint32
	local         chan struct{} // non-nil: sleep by parking (capacity 1)
	tick          *time.Timer   // with local: the parked sleeper's tick (a bell has one sleeper)
}

// BellAt returns the bell whose words — its sequence number, then its count
// of sleepers — are the 8 bytes of b at off (4-byte aligned), in memory its
// owner zeroed before first use; b may be shared between processes.
func BellAt(b []byte, off int) Bell {
	return Bell{seq: mem.Word32(b, off), sleepers: mem.Word32(b, off+4)}
}

// Ring wakes the sleeper, if any.
func (b Bell) Ring() { b.ring(1) }

// RingAll wakes every sleeper: a bell that several ranks wait on (a
// shm.Board's post, which every peer reads) rather than one consumer.
func (b Bell) RingAll() { b.ring(math.MaxInt32) }

// ring wakes up to n sleepers.
func (b Bell) ring(n int) {
	if b.sleepers == nil {
		return // a polled bell (ConnView): nobody sleeps on it
	}
	if b.sleepers.Load() != 0 {
		if b.local != nil {
			select {
			case b.local <- struct{}{}:
			default: // a wake-up is already pending
			}
			return
		}
		b.seq.Add(1)
		sys.FutexWake(b.seq, n)
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
	bounded  bool         // timeout bounds the call (ctx has no deadline)
	deadline atomic.Int64 // with bounded: the deadline in Unix nanoseconds, set by the first Check; 0 before
	timeout  time.Duration
	aborts   [3]*Abort // a rank's own, its group's, a sub-communicator's parent group's
	polls    int       // unsuccessful polls before sleeping on the bell
	osYield  bool      // pauses yield the core to other processes (YieldCores), not the processor to goroutines
	patient  bool      // spins pause the core between polls (Patient)
}

// Reset prepares w for a call: ctx is honoured; if ctx has no deadline,
// timeout (if > 0) bounds the call instead, counted from the call's first
// wait that has to pause — so a call whose waits all end at once never
// reads the clock. aborts (nil entries ignored) stop the wait when raised.
func (w *Waiter) Reset(ctx context.Context, timeout time.Duration, aborts ...*Abort) {
	*w = Waiter{ctx: ctx, done: ctx.Done(), timeout: timeout, polls: yieldPolls}
	if _, ok := ctx.Deadline(); !ok && timeout > 0 {
		w.bounded = true
	}
	copy(w.aborts[:], aborts)
}

// Again readies w for the next call, bounded by ctx, with the timeout and
// aborts of its last Reset and the pauses set since (YieldCores, Patient,
// SleepSoon): for a caller whose settings stay, what setting them again
// costs — a few nanoseconds, in a call that may take 140 (BENCHMARKS.md,
// issue 25) — it skips.
func (w *Waiter) Again(ctx context.Context) {
	w.ctx, w.done = ctx, ctx.Done()
	_, has := ctx.Deadline()
	w.bounded = !has && w.timeout > 0
	w.deadline = atomic.Int64{}
}

// YieldCores makes w's pauses between polls give the core to another
// process (sched_yield) rather than the processor to another goroutine:
// for ranks that outnumber their host's cores, where a rank waited for is
// a process that may need this core to run — unless the wait says where
// its ranks last ran (Cores) and every one it waits for last ran on
// another core: then it keeps polling, for up to awayPolls polls, since
// they run there, or will once a rank there yields. Reset clears it.
//
// Why, on the 2-core development VM with 4 ranks (BENCHMARKS.md, issue
// 25): a rank that yielded whenever it waited handed its core to its
// core-mate also while it waited for a rank running on the other core —
// a switch more than the call needs — and a 64-B all-reduce took ~10 µs
// where polling those waits took ~7.5.
func (w *Waiter) YieldCores() { w.osYield = true }

// Patient makes w's spins pause the core (PAUSE) between polls: for a
// rank with a core of its own. A tight spin of spinPolls loads lasts
// ~0.1 µs, less than a post takes to cross between cores, so nearly every
// wait went on to yield the processor — a trip through Go's scheduler
// that notices the post late — and its loads took the polled line back
// from the writer while it wrote. With a pause between polls (~20 ns on
// the 2-core development VM's Zen 5) the spin lasts ~1.3 µs and a 2-rank
// 32-byte all-reduce between processes took 0.44–0.47 µs instead of
// 0.50–0.54. Ranks that share cores keep the tight spin, which yields
// sooner to the rank they wait for: 4 goroutine ranks on 2 processors
// took 29 µs a 4-KiB all-reduce with pauses against 23 without. Reset
// clears it.
func (w *Waiter) Patient() { w.patient = true }

// SleepSoon makes w sleep on the bell as soon as it has spun, without
// yielding first. Goroutines that share their process with a net proxy
// need it: Go's scheduler looks for sockets that became ready only when no
// goroutine is runnable — and a yielding one always is — so yielding would
// hold up the proxy's reads by up to the 10 ms of the runtime's own check.
// Reset clears it.
func (w *Waiter) SleepSoon() { w.polls = spinPolls }

const (
	spinPolls  = 64               // polls before yielding the processor
	awayPolls  = 1024             // polls after spinPolls that a crowded wait for ranks on other cores keeps polling
	yieldPolls = 2048             // polls before sleeping on the bell
	checkEvery = 256              // yielding polls between checks of aborts, context and deadline
	tick       = time.Millisecond // a sleeper's longest nap between checks
)

// WaitAtLeast waits until c holds at least want.
func (w *Waiter) WaitAtLeast(c *atomic.Uint64, want uint64, bell Bell) error {
	return w.WaitAtLeastWarm(c, want, bell, nil, nil)
}

// WaitAtLeastWarm is WaitAtLeast for a counter whose producer writes warm
// before it, for a consumer that reads warm next: while the wait spins,
// each poll also loads the first word of every 64-byte line of warm (which
// starts on a line), so the lines cross to this core alongside the
// counter's instead of one cache miss after it. Only a few lines pay: the
// consumer's loads take them from the producer while it writes the rest.
// cores, if not nil, says where the ranks the caller waits for last ran
// (YieldCores).
func (w *Waiter) WaitAtLeastWarm(c *atomic.Uint64, want uint64, bell Bell, warm []byte, cores Cores) error {
	for n := 0; c.Load() < want; n++ {
		if n < w.polls {
			if n < spinPolls {
				for off := 0; off+8 <= len(warm); off += 64 {
					mem.Word(warm, off).Load()
				}
			}
			if err := w.pause(n, cores); err != nil {
				return err
			}
			continue
		}
		if err := w.sleep(n, bell, func() bool { return c.Load() >= want }); err != nil {
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
		if n < w.polls {
			if err := w.pause(n, nil); err != nil {
				return 0, err
			}
			continue
		}
		if err := w.sleep(n, bell, func() bool { return uint32(word.Load()>>32) == flag }); err != nil {
			return 0, err
		}
	}
}

// sleep is a wait's n-th unsuccessful poll once spinning and yielding are
// over: it naps on bell — unless ready turns true while the sleeper
// registers, so a post between the poll and the nap is not slept through —
// or, on a polled bell, yields or sleeps briefly (pollNap); then it checks
// whether the call must end.
func (w *Waiter) sleep(n int, bell Bell, ready func() bool) error {
	if bell.sleepers == nil {
		return w.pollNap(n)
	}
	bell.sleepers.Add(1)
	tok := bell.seq.Load()
	if !ready() {
		w.nap(bell, tok)
	}
	bell.sleepers.Add(^uint32(0))
	return w.Check()
}

// nap sleeps on bell for at most a tick, or until it rings (the futex
// returns at once if the bell rang since tok was read; a parked sleeper
// finds the pending wake-up in the channel).
func (w *Waiter) nap(bell Bell, tok uint32) {
	if bell.local == nil {
		sys.FutexWait(bell.seq, tok, tick)
		return
	}
	bell.tick.Reset(tick)
	select {
	case <-bell.local:
		bell.tick.Stop()
	case <-bell.tick.C:
	}
}

// pollNap is a polled bell's sleep after the n-th unsuccessful poll (the
// other end, a GPU, never rings): yield for a while, then sleep a few
// microseconds at a time. Sleeping matters: a goroutine that only yields
// keeps its processor busy, and with every processor busy Go's scheduler
// looks at the sockets only every 10 ms (measured: GPU ranks over sockets
// with GOMAXPROCS=4 took 10 ms a call at any size).
func (w *Waiter) pollNap(n int) error {
	if n < w.polls+pollYields {
		runtime.Gosched()
	} else {
		time.Sleep(pollSleep)
	}
	return w.Check()
}

const (
	pollYields = 256                  // yields before a polled wait sleeps
	pollSleep  = 2 * time.Microsecond // a polled wait's nap (the timer's resolution rounds it up)
)

// pause is called after the n-th unsuccessful poll while spinning or
// yielding, with the wait's Cores (nil: not known).
func (w *Waiter) pause(n int, cores Cores) error {
	if n < spinPolls {
		if w.patient {
			mem.Pause()
		}
		return nil
	}
	if n%checkEvery == 0 {
		if err := w.Check(); err != nil {
			return err
		}
	}
	switch {
	case !w.osYield:
		runtime.Gosched()
	case n < spinPolls+awayPolls && w.place(cores) == Away:
		mem.Pause()
	default:
		sys.Yield()
	}
	return nil
}

// Cores tells a crowded wait (YieldCores) where ranks last ran, by their
// core words — a core's number plus one, 0 where not known, in memory the
// ranks share (a shm.Board's) — and keeps this rank's current.
type Cores interface {
	// Place returns how a wait of a rank on core me (a core's number
	// plus one) pauses.
	Place(me uint32) Place
}

// Place is how a crowded wait pauses between polls (YieldCores).
type Place uint8

const (
	Near Place = iota // a rank waited for last ran on this core, or where is not known: yield the core
	Away              // every rank waited for last ran on another core: keep polling
)

// place returns how a crowded wait with cores pauses.
func (w *Waiter) place(cores Cores) Place {
	if cores == nil {
		return Near
	}
	cpu := sys.CPU()
	if cpu < 0 {
		return Near
	}
	return cores.Place(uint32(cpu) + 1)
}

// Settle waits up to d for the call to end — an abort, the context, the
// deadline — and returns what ended it, or nil if nothing did. A rank that
// finds a peer gone outside a wait (its memory unreadable) asks this
// first: the group's verdict names the rank lost first, where the peer it
// found gone may have left because of that loss.
func (w *Waiter) Settle(d time.Duration) error {
	end := time.Now().Add(d)
	for {
		if err := w.Check(); err != nil || time.Now().After(end) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
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
	if w.bounded {
		now := time.Now().UnixNano()
		d := w.deadline.Load()
		if d == 0 { // the call's first check: the timeout starts now
			w.deadline.CompareAndSwap(0, now+int64(w.timeout))
		} else if now > d {
			return fmt.Errorf("%w after %v", errs.ErrTimeout, w.timeout)
		}
	}
	return nil
}
