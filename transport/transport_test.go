package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sizes = Sizes{Simple: ring.NSteps * 1024, LL: ring.NSteps * 256}

func newConn(t *testing.T) *Conn {
	t.Helper()
	c, err := NewConn(mem.Alloc(sizes.Bytes(), 128), sizes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewConnRejects(t *testing.T) {
	good := mem.Alloc(sizes.Bytes()+128, 128)
	cases := []struct {
		name string
		b    []byte
		s    Sizes
		want string
	}{
		{"simple size", good, Sizes{Simple: 100, LL: sizes.LL}, "Simple buffer size 100"},
		{"LL size", good, Sizes{Simple: sizes.Simple, LL: 0}, "LL buffer size 0"},
		{"short", good[:100], sizes, "need"},
		{"misaligned", good[8:], sizes, "not 128-byte aligned"},
	}
	for _, c := range cases {
		if _, err := NewConn(c.b, c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want error containing %q", c.name, err, c.want)
		}
	}
}

func TestSimpleSlotsDoNotOverlapCounters(t *testing.T) {
	c := newConn(t)
	for step := range uint64(ring.NSteps) {
		s := c.SimpleSlots(step, 1)
		for i := range s {
			s[i] = 0xFF
		}
	}
	if c.Head().Load() != 0 || c.Tail().Load() != 0 {
		t.Fatal("slot writes reached head or tail")
	}
	if len(c.SimpleSlots(6, 2)) != 2*c.SimpleSlotBytes() {
		t.Fatal("two-slot slice has the wrong length")
	}
}

func TestLLRoundTrip(t *testing.T) {
	c := newConn(t)
	var w Waiter
	w.Reset(context.Background(), time.Second)
	for _, n := range []int{0, 1, 3, 4, 5, 8, 127, 128} { // a slot carries 128 bytes
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		step := uint64(n)
		c.WriteLL(step, data)
		got := make([]byte, n)
		if err := c.ReadLL(step, got, &w); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(data) {
			t.Fatalf("%d bytes: read %v, wrote %v", n, got, data)
		}
	}
}

// TestLLStaleWordsIgnored: words left from an earlier use of a slot carry an
// older flag and must not be taken for the current step's data.
func TestLLStaleWordsIgnored(t *testing.T) {
	c := newConn(t)
	c.WriteLL(3, make([]byte, 64)) // step 3: slot 3, flag 4
	var w Waiter
	w.Reset(context.Background(), 30*time.Millisecond)
	// Step 11 reuses slot 3; its writer has only written 8 bytes so far.
	c.WriteLL(11, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	err := c.ReadLL(11, make([]byte, 64), &w)
	if !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("read of a half-written slot returned %v, want a timeout", err)
	}
}

func TestLLCleaning(t *testing.T) {
	if LLCleanDue(0) || LLCleanDue(0x7ffffff7) || !LLCleanDue(0x7ffffff8) || !LLCleanDue(0x7fffffff) || LLCleanDue(0x80000000) || !LLCleanDue(0xfffffff8) {
		t.Fatal("LLCleanDue picks the wrong steps")
	}
	c := newConn(t)
	step := uint64(0x7ffffff8)
	c.WriteLL(step, []byte{9, 9, 9, 9, 9})
	slot := c.LLSlot(step)
	for i := range slot {
		if w := slot[i].Load(); uint32(w>>32) != LLFlag(step) {
			t.Fatalf("word %d of a cleaned slot carries flag %#x", i, w>>32)
		}
	}
	// Flags are never 0 (zeroed memory), and repeat only after 2^32−1 steps.
	for _, step := range []uint64{0, 1<<32 - 2, 1<<32 - 1, 1 << 32, 1<<33 - 2, 1<<64 - 1} {
		if LLFlag(step) == 0 {
			t.Fatalf("step %#x has flag 0", step)
		}
	}
	if LLFlag(1<<32-2) != 1<<32-1 || LLFlag(1<<32-1) != 1 || LLFlag(1<<32-1+5) != LLFlag(5) {
		t.Fatal("flags must step by one and repeat every 2^32-1 steps")
	}
}

// TestWaiterEndsWaits: each of the four ends a wait, of each kind, with
// the tight spin and with a patient one (Patient).
func TestWaiterEndsWaits(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *Waiter) context.CancelFunc
		want  error
	}{
		{"config timeout", func(w *Waiter) context.CancelFunc {
			w.Reset(context.Background(), 50*time.Millisecond)
			return func() {}
		}, errs.ErrTimeout},
		{"context deadline", func(w *Waiter) context.CancelFunc {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			w.Reset(ctx, time.Hour)
			return cancel
		}, context.DeadlineExceeded},
		{"cancel", func(w *Waiter) context.CancelFunc {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			w.Reset(ctx, time.Hour)
			return cancel
		}, context.Canceled},
		{"abort", func(w *Waiter) context.CancelFunc {
			var a Abort
			time.AfterFunc(50*time.Millisecond, func() { a.Set(errors.New("stop")) })
			w.Reset(context.Background(), time.Hour, nil, &a)
			return func() {}
		}, errs.ErrAborted},
	}
	for _, c := range cases {
		conn := newConn(t)
		waits := map[string]func(w *Waiter) error{
			"data":   func(w *Waiter) error { return conn.WaitData(1, w) },
			"credit": func(w *Waiter) error { return conn.WaitCredit(8, 1, w) },
			"LL":     func(w *Waiter) error { return conn.ReadLL(0, make([]byte, 8), w) },
		}
		for kind, wait := range waits {
			for _, patient := range []bool{false, true} {
				var w Waiter
				cancel := c.setup(&w)
				if patient {
					w.Patient()
				}
				start := time.Now()
				err := wait(&w)
				cancel()
				if !errors.Is(err, c.want) {
					t.Errorf("%s (%s, patient %v): %v, want %v", c.name, kind, patient, err, c.want)
				}
				if el := time.Since(start); el > 10*time.Second { // 50 ms, generously on a busy machine
					t.Errorf("%s (%s, patient %v): took %v", c.name, kind, patient, el)
				}
			}
		}
	}
}

// TestWaiterTimeoutFromFirstPause: Config's timeout counts from the call's
// first wait that has to pause, not from Reset (a call whose waits end at
// once never reads the clock): time spent between Reset and that wait does
// not count, and the wait itself is still bounded.
func TestWaiterTimeoutFromFirstPause(t *testing.T) {
	conn := newConn(t)
	var w Waiter
	w.Reset(context.Background(), 500*time.Millisecond)
	time.Sleep(600 * time.Millisecond) // the call's own work, longer than the timeout
	time.AfterFunc(10*time.Millisecond, func() { conn.PostSimple(0, 1, 8) })
	require.NoError(t, conn.WaitData(1, &w), "the first paused wait starts the timeout")

	start := time.Now()
	err := conn.WaitData(2, &w) // never posted
	require.ErrorIs(t, err, errs.ErrTimeout)
	assert.Less(t, time.Since(start), 10*time.Second)
}

// TestBellWakesSleeper: a receiver asleep on the data bell wakes when the
// sender posts, well before its nap would end on its own.
func TestBellWakesSleeper(t *testing.T) {
	c := newConn(t)
	var w Waiter
	w.Reset(context.Background(), time.Minute)
	waited := make(chan error, 1)
	go func() { waited <- c.WaitData(5, &w) }()
	// The waiter registers as a sleeper once it has polled in vain; the
	// registration signals nothing, so poll for it.
	require.Eventually(t, func() bool { return c.data.sleepers.Load() != 0 }, time.Minute, 100*time.Microsecond,
		"the waiter never slept on the bell")
	c.PostSimple(4, 5, 0)
	require.NoError(t, <-waited)
	assert.Zero(t, c.data.sleepers.Load(), "sleepers left registered")
}

func TestAbortFirstCauseWins(t *testing.T) {
	var a Abort
	if a.Err() != nil || a.IsSet() {
		t.Fatal("zero Abort is set")
	}
	first := errors.New("first")
	if !a.Set(first) || a.Set(errors.New("second")) {
		t.Fatal("Set must report only the first raise")
	}
	if err := a.Err(); !errors.Is(err, errs.ErrAborted) || !errors.Is(err, first) {
		t.Fatalf("Err = %v", err)
	}
}

func TestLoopback(t *testing.T) {
	l, err := NewLoopback(2, 1, sizes)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := l.Conn(ctx, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := l.Conn(ctx, 0, 1, 0); b != a {
		t.Fatal("the same connection must come back")
	}
	if _, err := l.Conn(ctx, 0, 2, 0); err == nil {
		t.Fatal("rank 2 of 2 accepted")
	}
	if _, err := l.Conn(ctx, 0, 1, 1); err == nil {
		t.Fatal("channel 1 of 1 accepted")
	}
	l.Close()
	if _, err := l.Conn(ctx, 1, 0, 0); err == nil {
		t.Fatal("closed loopback handed out a connection")
	}
	if _, err := NewLoopback(0, 1, sizes); err == nil {
		t.Fatal("0 ranks accepted")
	}
}
