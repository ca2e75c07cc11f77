package rdma_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testSizes = transport.Sizes{Simple: ring.NSteps * 4096, LL: ring.NSteps * 1024}

// wirePair is both ends of one connection over a provider.
type wirePair struct {
	s          *rdma.Sender
	r          *rdma.Receiver
	sMem, rMem []byte
	sc, rc     *transport.Conn
	sDev, rDev rdma.Device
}

func newPair(t testing.TB, p rdma.Provider, devName string, port int) *wirePair {
	t.Helper()
	w := &wirePair{sMem: mem.Alloc(testSizes.Bytes(), 128), rMem: mem.Alloc(testSizes.Bytes(), 128)}
	var err error
	if w.sDev, err = p.Open(devName, port); err != nil {
		t.Fatal(err)
	}
	if w.rDev, err = p.Open(devName, port); err != nil {
		t.Fatal(err)
	}
	if w.sc, err = transport.NewConn(w.sMem, testSizes); err != nil {
		t.Fatal(err)
	}
	if w.rc, err = transport.NewConn(w.rMem, testSizes); err != nil {
		t.Fatal(err)
	}
	if w.s, err = rdma.NewSender(w.sDev, w.sMem, testSizes, rdma.Config{Peer: 3, Channel: 1}); err != nil {
		t.Fatal(err)
	}
	if w.r, err = rdma.NewReceiver(w.rDev, w.rMem, testSizes, rdma.Config{Peer: 2, Channel: 1}); err != nil {
		t.Fatal(err)
	}
	sb, rb := w.s.Blob(), w.r.Blob()
	if err := w.s.Connect(rb); err != nil {
		t.Fatal(err)
	}
	if err := w.r.Connect(sb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.s.Close()
		w.r.Close()
		w.sDev.Close()
		w.rDev.Close()
	})
	return w
}

// plannedPost is one post of a test run and how the receiver places it.
type plannedPost struct {
	p       transport.Post
	staging bool // place returns a staging buffer, not the slot itself
}

// planPosts returns n posts covering every shape the wire must carry:
// empty, one byte, odd sizes, full slots, multi-slot, skipped slots, LL.
func planPosts(n int, rng *rand.Rand) []plannedPost {
	slot := testSizes.Simple / ring.NSteps
	llSlot := testSizes.LL / ring.NSteps
	var out []plannedPost
	var step uint64
	for i := 0; i < n; i++ {
		p := transport.Post{Step: step, Proto: uint8(ring.Simple)}
		switch i % 9 {
		case 7: // LL: one slot of words
			p.Proto, p.Slots = uint8(ring.LL), 1
			p.Bytes = uint32(8 * (1 + rng.IntN(llSlot/8)))
		default:
			p.Skip = uint32(rng.IntN(2))
			start := (step + uint64(p.Skip)) % ring.NSteps
			data := 1 + rng.IntN(3)
			data = min(data, int(ring.NSteps-start))
			p.Slots = p.Skip + uint32(data)
			switch i % 9 {
			case 0:
				p.Bytes = 0
			case 1:
				p.Bytes = 1
			case 2, 3:
				p.Bytes = uint32(data * slot) // full
			default:
				p.Bytes = uint32(rng.IntN(data*slot)) | 1 // odd
			}
		}
		out = append(out, plannedPost{p: p, staging: i%5 == 2})
		step += uint64(p.Slots)
	}
	return out
}

// region is where post p's data lives in a connection laid out as c.
func region(c *transport.Conn, p transport.Post) []byte {
	start := p.Step + uint64(p.Skip)
	if ring.Protocol(p.Proto) == ring.LL {
		return mem.Bytes(c.LLSlot(start))[:p.Bytes]
	}
	return c.SimpleSlots(start, int(p.Slots-p.Skip))[:p.Bytes]
}

func fill(b []byte, step uint64) {
	r := rand.New(rand.NewPCG(step, 0x5eed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// runPosts moves posts from w.s to w.r as the proxies would, with credit
// flow, and checks every byte at its offset in the receiver's memory. It
// closes the sender at the end, to stop its credit routine.
func runPosts(t testing.TB, w *wirePair, posts []plannedPost) {
	head := newCounter(0)
	var credit, work sync.WaitGroup
	errc := make(chan error, 3)
	credit.Add(1)
	go func() { // the send proxy's credit routine
		defer credit.Done()
		defer head.end()
		for {
			h, err := w.s.Credit()
			if errors.Is(err, rdma.ErrClosed) {
				return
			}
			if err != nil {
				errc <- fmt.Errorf("Credit: %w", err)
				return
			}
			head.raise(h)
		}
	}()
	work.Add(2)
	go func() { // the executor and send proxy
		defer work.Done()
		for _, pp := range posts {
			p := pp.p
			if h, ok := head.wait(max(p.Step+uint64(p.Slots), ring.NSteps)-ring.NSteps, time.Minute); !ok {
				errc <- fmt.Errorf("no credit for %v: head %d", p, h)
				return
			}
			data := region(w.sc, p)
			fill(data, p.Step)
			if err := w.s.Send(p, data); err != nil {
				errc <- fmt.Errorf("Send %v: %w", p, err)
				return
			}
		}
	}()
	go func() { // the receive proxy and executor
		defer work.Done()
		staging := make([]byte, testSizes.Simple)
		want := make([]byte, testSizes.Simple)
		for i, pp := range posts {
			var dst []byte
			got, err := w.r.Recv(func(p transport.Post) ([]byte, error) {
				if p != pp.p {
					return nil, fmt.Errorf("post %d: got %v, want %v", i, p, pp.p)
				}
				dst = region(w.rc, p)
				if pp.staging {
					dst = staging[:p.Bytes]
				}
				return dst, nil
			})
			if err != nil {
				errc <- fmt.Errorf("Recv post %d: %w", i, err)
				return
			}
			exp := want[:got.Bytes]
			fill(exp, got.Step)
			if !bytes.Equal(dst, exp) {
				errc <- fmt.Errorf("post %d %v: placed data differs", i, got)
				return
			}
			if !bytes.Equal(region(w.rc, got), exp) {
				errc <- fmt.Errorf("post %d %v: the data is not at its offset in the receiver's memory", i, got)
				return
			}
			if err := w.r.SendCredit(got.Step + uint64(got.Slots)); err != nil {
				errc <- fmt.Errorf("SendCredit after post %d: %w", i, err)
				return
			}
		}
	}()
	work.Wait()
	if len(posts) > 0 && len(errc) == 0 {
		last := posts[len(posts)-1].p
		if got, _ := head.wait(last.Step+uint64(last.Slots), time.Minute); got != last.Step+uint64(last.Slots) {
			errc <- fmt.Errorf("final credit %d, want %d", got, last.Step+uint64(last.Slots))
		}
	}
	w.s.Close()
	credit.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func TestWireMovesPosts(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	posts := planPosts(2000, rand.New(rand.NewPCG(1, 2)))
	runPosts(t, w, posts)
}

// sendRaw posts a header the test built, bypassing Send's encoding.
func sendRaw(t *testing.T, s *rdma.Sender, hdr []byte, ringStep uint64, imm uint32) {
	t.Helper()
	require.NoError(t, s.SendRawHeader(hdr, ringStep, imm))
}

func noPlace(t *testing.T) func(transport.Post) ([]byte, error) {
	return func(p transport.Post) ([]byte, error) {
		t.Errorf("place called for %v, which Recv must refuse", p)
		return nil, errors.New("unreachable")
	}
}

func TestRecvRejectsCorruptHeader(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(h []byte)
		want string
	}{
		{"flipped bit", func(h []byte) { h[17] ^= 0x10 }, "checksum"},
		{"bad checksum", func(h []byte) { h[28]++ }, "checksum"},
		{"zeroed", func(h []byte) { clear(h) }, "checksum"},
		{"version 1", resum(func(h []byte) { h[19] = 1 }), "version 1"},
		{"unknown flag", resum(func(h []byte) { h[20] |= 0x80 }), "unknown flags 0x81"},
		{"reserved byte 21", resum(func(h []byte) { h[21] = 1 }), "reserved"},
		{"reserved byte 23", resum(func(h []byte) { h[23] = 0x40 }), "reserved"},
		{"data sum without its flag", resum(func(h []byte) { h[20] = 0 }), "reserved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
			var h [rdma.HeaderBytes]byte
			p := transport.Post{Step: 0, Slots: 1, Bytes: 10, Proto: uint8(ring.Simple)}
			rdma.PutHeader(h[:], p, 256, 0x600d, true)
			c.edit(h[:])
			sendRaw(t, w.s, h[:], 0, 0)
			_, err := w.r.Recv(noPlace(t))
			if !errors.Is(err, rdma.ErrHeader) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Recv of a header with a %s: %v", c.name, err)
			}
		})
	}
}

// resum returns edit followed by fixing the header's checksum, so that what
// edit changed is what the receiver must catch.
func resum(edit func(h []byte)) func(h []byte) {
	return func(h []byte) {
		edit(h)
		rdma.ResumHeader(h)
	}
}

func TestRecvRejectsBadPosts(t *testing.T) {
	slot := testSizes.Simple / ring.NSteps
	for _, c := range []struct {
		name string
		p    transport.Post
		off  int
		imm  uint32
		want string
	}{
		{"step gap", transport.Post{Step: 2, Slots: 1, Bytes: 8}, 256, 2, "does not follow step 0"},
		{"immediate mismatch", transport.Post{Step: 0, Slots: 1, Bytes: 8}, 256, 1, "immediate"},
		{"overrun", transport.Post{Step: 0, Slots: 1, Bytes: uint32(slot)}, testSizes.Bytes() - 4, 0, "overruns"},
		{"no slots", transport.Post{Step: 0, Slots: 0}, 256, 0, "0 slots"},
		{"skip all", transport.Post{Step: 0, Slots: 2, Skip: 2}, 256, 0, "2 skipped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
			var h [rdma.HeaderBytes]byte
			rdma.PutHeader(h[:], c.p, c.off, 0, false)
			sendRaw(t, w.s, h[:], uint64(c.imm), c.imm)
			_, err := w.r.Recv(noPlace(t))
			if !errors.Is(err, rdma.ErrHeader) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Recv: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestRecvRejectsStepGapAfterGoodPost(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	p0 := transport.Post{Step: 0, Slots: 2, Bytes: 5, Proto: uint8(ring.Simple)}
	d0 := region(w.sc, p0)
	fill(d0, 0)
	if err := w.s.Send(p0, d0); err != nil {
		t.Fatal(err)
	}
	p1 := transport.Post{Step: 3, Slots: 1, Bytes: 0, Proto: uint8(ring.Simple)} // should be step 2
	if err := w.s.Send(p1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.r.Recv(func(p transport.Post) ([]byte, error) { return region(w.rc, p), nil }); err != nil {
		t.Fatal(err)
	}
	_, err := w.r.Recv(noPlace(t))
	if !errors.Is(err, rdma.ErrHeader) || !strings.Contains(err.Error(), "does not follow step 2") {
		t.Fatalf("Recv of a post after a gap: %v", err)
	}
}

func TestRecvPlaceErrors(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	p := transport.Post{Step: 0, Slots: 1, Bytes: 16, Proto: uint8(ring.Simple)}
	d := region(w.sc, p)
	if err := w.s.Send(p, d); err != nil {
		t.Fatal(err)
	}
	_, err := w.r.Recv(func(transport.Post) ([]byte, error) { return make([]byte, 15), nil })
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "placed in 15 bytes") {
		t.Fatalf("Recv with a short place: %v", err)
	}
}

func TestSendRejectsForeignData(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	p := transport.Post{Step: 0, Slots: 1, Bytes: 4}
	if err := w.s.Send(p, make([]byte, 4)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("Send of data outside the connection memory: %v", err)
	}
	if err := w.s.Send(p, region(w.sc, p)[:3]); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("Send of 3 bytes for a 4-byte post: %v", err)
	}
}

func TestSendRejectsBadShape(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	for _, p := range []transport.Post{
		{Slots: 2*ring.NSteps + 1},
		{Slots: 257}, // would be 1 slot in a byte
		{Slots: 0},
		{Skip: 2, Slots: 2},
		{Skip: 256, Slots: 2}, // would skip none in a byte
	} {
		if err := w.s.Send(p, nil); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), p.String()) {
			t.Errorf("Send of %v: %v", p, err)
		}
	}
	if w.s.Posted() != 0 {
		t.Fatalf("%d posts went out", w.s.Posted())
	}
}

// TestWireChecksData: with RINGO_CHECK=1 every header carries its data's
// checksum, which the receiver verifies on every shape of post.
func TestWireChecksData(t *testing.T) {
	t.Setenv("RINGO_CHECK", "1")
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	if !w.s.Sums() {
		t.Fatal("RINGO_CHECK=1 and the sender does not checksum")
	}
	runPosts(t, w, planPosts(500, rand.New(rand.NewPCG(5, 6))))
}

// TestRecvRejectsCorruptData changes a byte of a post's data in the
// receiver's memory, after the sender's write and before Recv: the
// receiver refuses the post, naming it, without calling place. The sender
// decides: a receiver made without RINGO_CHECK verifies just the same.
func TestRecvRejectsCorruptData(t *testing.T) {
	for _, check := range []string{"1", "sender only"} {
		t.Run("RINGO_CHECK="+check, func(t *testing.T) {
			t.Setenv("RINGO_CHECK", "")
			if check == "1" {
				t.Setenv("RINGO_CHECK", "1")
			}
			w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
			if check != "1" {
				w.s.SetSums(true) // as rdma.NewSender does where RINGO_CHECK=1 but the receiver's is not
			}
			p := transport.Post{Step: 0, Skip: 1, Slots: 3, Bytes: 5000, Proto: uint8(ring.Simple)}
			data := region(w.sc, p)
			fill(data, p.Step)
			if err := w.s.Send(p, data); err != nil {
				t.Fatal(err)
			}
			got := region(w.rc, p) // the fake's write has landed
			if !bytes.Equal(got, data) {
				t.Fatal("the data is not in the receiver's memory after Send")
			}
			got[4321] ^= 0x04
			_, err := w.r.Recv(noPlace(t))
			if !errors.Is(err, rdma.ErrData) || !strings.Contains(err.Error(), p.String()) || !strings.Contains(err.Error(), "corrupted on the wire") {
				t.Fatalf("Recv of corrupted data: %v", err)
			}
		})
	}
}

// TestNoCheckNoDataSum: without RINGO_CHECK the sender's headers carry no
// data checksum.
func TestNoCheckNoDataSum(t *testing.T) {
	t.Setenv("RINGO_CHECK", "0")
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	p := transport.Post{Step: 0, Slots: 1, Bytes: 64, Proto: uint8(ring.Simple)}
	data := region(w.sc, p)
	fill(data, p.Step)
	if err := w.s.Send(p, data); err != nil {
		t.Fatal(err)
	}
	got, sum, summed, err := w.r.HeaderAt(0) // entry 0 of the receiver's header ring
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.False(t, summed, "the header says its data is checksummed")
	assert.Zero(t, sum)
}

func TestCreditFlow(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	for _, h := range []uint64{5, 5, 3, 9, 1<<32 + 3, 1<<33 + 1} {
		if err := w.r.SendCredit(h); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []uint64{5, 9, 1<<32 + 3, 1<<33 + 1} { // repeats and regressions are not sent
		got, err := w.s.Credit()
		if err != nil || got != want {
			t.Fatalf("Credit = %d, %v; want %d", got, err, want)
		}
	}
	// Many more credits than the credit ring holds, consumed as they come.
	// As in a real connection the receiver reports at most NSteps steps
	// beyond what the sender has taken in (it cannot consume steps the
	// sender was given no credit to produce).
	const first, last = 1<<33 + 2, 1<<33 + 400
	taken := newCounter(first - 1)
	defer taken.end()
	done := make(chan error, 1)
	go func() {
		for h := uint64(first); h < last; h++ {
			if got, ok := taken.wait(h-ring.NSteps, time.Minute); !ok {
				done <- fmt.Errorf("the sender took only up to %d", got)
				return
			}
			if err := w.r.SendCredit(h); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for want := uint64(first); want < last; want++ {
		got, err := w.s.Credit()
		if err != nil || got != want {
			var serr error
			select {
			case serr = <-done:
			case <-time.After(time.Second):
			}
			t.Fatalf("Credit = %d, %v; want %d (SendCredit: %v)", got, err, want, serr)
		}
		taken.raise(got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestErrorCompletionNamesPeer(t *testing.T) {
	t.Run("queue pair in error", func(t *testing.T) {
		f := rdmatest.NewFabric()
		w := newPair(t, f, "fake0", 1)
		if err := f.Break(w.s.QPNum()); err != nil {
			t.Fatal(err)
		}
		p := transport.Post{Step: 0, Slots: 1}
		err := w.s.Send(p, nil) // posted; it completes flushed
		if err == nil {
			err = w.s.Send(transport.Post{Step: 1, Slots: 1}, nil)
		}
		if err == nil || !strings.Contains(err.Error(), "rank 3") || !strings.Contains(err.Error(), "Work Request Flushed Error") ||
			!strings.Contains(err.Error(), fmt.Sprintf("qp %#x", w.s.QPNum())) {
			t.Fatalf("Send on a broken queue pair: %v", err)
		}
		_, err = w.s.Credit()
		if err == nil || !strings.Contains(err.Error(), "credit receive") || !strings.Contains(err.Error(), "Flushed") {
			t.Fatalf("Credit on a broken queue pair: %v", err)
		}
	})
	t.Run("dead peer", func(t *testing.T) {
		f := rdmatest.NewFabric()
		w := newPair(t, f, "fake0", 1)
		if err := f.Kill(w.r.QPNum()); err != nil {
			t.Fatal(err)
		}
		err := w.s.Send(transport.Post{Step: 0, Slots: 1}, nil)
		if err == nil {
			err = w.s.Send(transport.Post{Step: 1, Slots: 1}, nil)
		}
		if !errors.Is(err, errs.ErrPeerLost) || !strings.Contains(err.Error(), "rank 3") ||
			!strings.Contains(err.Error(), "transport retry counter exceeded") {
			t.Fatalf("Send to a dead peer: %v", err)
		}
	})
	t.Run("receiver's queue pair broken", func(t *testing.T) {
		f := rdmatest.NewFabric()
		w := newPair(t, f, "fake0", 1)
		if err := f.Break(w.r.QPNum()); err != nil {
			t.Fatal(err)
		}
		_, err := w.r.Recv(noPlace(t))
		if err == nil || !strings.Contains(err.Error(), "receive from rank 2") || !strings.Contains(err.Error(), "Flushed") {
			t.Fatalf("Recv on a broken queue pair: %v", err)
		}
		err = w.r.SendCredit(1)
		if err == nil {
			err = w.r.SendCredit(2)
		}
		if err == nil || !strings.Contains(err.Error(), "credit write") {
			t.Fatalf("SendCredit on a broken queue pair: %v", err)
		}
	})
}

func TestCloseUnblocks(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	errc := make(chan error, 2)
	go func() {
		_, err := w.r.Recv(noPlace(t))
		errc <- err
	}()
	go func() {
		_, err := w.s.Credit()
		errc <- err
	}()
	// Close while both calls are in progress; they signal nothing on
	// entering, so poll.
	require.Eventually(t, func() bool { return w.r.InCall() && w.s.InCall() }, time.Minute, time.Millisecond,
		"Recv and Credit never started")
	w.r.Close()
	w.s.Close()
	for i := 0; i < 2; i++ {
		if err := <-errc; !errors.Is(err, rdma.ErrClosed) {
			t.Fatalf("a call blocked across Close returned %v", err)
		}
	}
	if err := w.s.Send(transport.Post{Slots: 1}, nil); !errors.Is(err, rdma.ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
}

func TestAbortUnblocks(t *testing.T) {
	w := newPair(t, rdmatest.NewFabric(), "fake0", 1)
	var a transport.Abort
	w.r.SetAbort(&a)
	errc := make(chan error, 1)
	go func() {
		_, err := w.r.Recv(noPlace(t))
		errc <- err
	}()
	a.Set(errors.New("test abort"))
	if err := <-errc; !errors.Is(err, errs.ErrAborted) {
		t.Fatalf("Recv across an abort: %v", err)
	}
}

func TestConnectChecks(t *testing.T) {
	f := rdmatest.NewFabric()
	w := newPair(t, f, "fake0", 1)
	dev, _ := f.Open("fake1", 1)
	s2, err := rdma.NewSender(dev, mem.Alloc(testSizes.Bytes(), 128), testSizes, rdma.Config{Peer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Connect(w.s.Blob()); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "same end") {
		t.Fatalf("connecting two senders: %v", err)
	}
	small := transport.Sizes{Simple: testSizes.Simple / 2, LL: testSizes.LL}
	r2, err := rdma.NewReceiver(dev, mem.Alloc(small.Bytes(), 128), small, rdma.Config{Peer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := s2.Connect(r2.Blob()); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "FIFO sizes differ") {
		t.Fatalf("connecting different sizes: %v", err)
	}
	if err := s2.Connect([]byte("short")); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("connecting to a bad blob: %v", err)
	}
	if _, err := rdma.NewSender(dev, make([]byte, 10), testSizes, rdma.Config{}); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("rdma.NewSender over too little memory: %v", err)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	testHotPath(t, func(t testing.TB) *wirePair { return newPair(t, rdmatest.NewFabric(), "fake0", 1) })
}

func TestHotPathDoesNotAllocateChecked(t *testing.T) {
	t.Setenv("RINGO_CHECK", "1")
	testHotPath(t, func(t testing.TB) *wirePair { return newPair(t, rdmatest.NewFabric(), "fake0", 1) })
}

func testHotPath(t *testing.T, mk func(testing.TB) *wirePair) {
	w := mk(t)
	var step uint64
	place := func(p transport.Post) ([]byte, error) { return region(w.rc, p), nil }
	allocs := testing.AllocsPerRun(200, func() {
		p := transport.Post{Step: step, Slots: 1, Bytes: 100, Proto: uint8(ring.Simple)}
		if err := w.s.Send(p, region(w.sc, p)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.r.Recv(place); err != nil {
			t.Fatal(err)
		}
		step++
		if err := w.r.SendCredit(step); err != nil {
			t.Fatal(err)
		}
		if _, err := w.s.Credit(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a post and its credit allocate %v times", allocs)
	}
}

// counter is a value that only grows, raised by one goroutine and waited on
// by another: a wait ends when the value reaches what it wants, when the
// raiser ends the counter (it gave up), or at a deadline.
type counter struct {
	mu      sync.Mutex
	v       uint64
	ended   bool
	changed chan struct{} // closed, and replaced, on every change
}

func newCounter(v uint64) *counter { return &counter{v: v, changed: make(chan struct{})} }

// raise sets the value to v.
func (c *counter) raise(v uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.v = v
	close(c.changed)
	c.changed = make(chan struct{})
}

// end ends every wait, now and later.
func (c *counter) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	close(c.changed)
	c.changed = make(chan struct{})
}

// wait waits up to d for the value to reach want, and returns it and
// whether it did.
func (c *counter) wait(want uint64, d time.Duration) (uint64, bool) {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		c.mu.Lock()
		v, ended, changed := c.v, c.ended, c.changed
		c.mu.Unlock()
		if v >= want || ended {
			return v, v >= want
		}
		select {
		case <-changed:
		case <-timeout.C:
			return v, false
		}
	}
}
