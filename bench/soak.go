package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/internal/sys"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/shm"
)

// SoakOptions describe a soak: N collectives, each of a collective,
// datatype, op, count, root and placement drawn at random (the same draws on
// every rank), each filled with the sweep's exact inputs and checked element
// by element as the sweep checks them (rankRun.check), with the process
// figures sampled along the way.
type SoakOptions struct {
	N        int           // collectives in all, the warm-up included
	MaxBytes int64         // the largest buffer of a collective, in bytes
	Seed     uint64        // seeds the draws, and through them every collective's data
	Every    int           // a sample every this many collectives (and one after the last)
	Warmup   int           // collectives before the first sample
	Timeout  time.Duration // limit of each collective, and of each aggregation over ranks
	// Windows (-R) places a host rank's buffers in HostAlloc's memory,
	// registered as windows (RegisterHostWindow).
	Windows bool
	// The choices; nil: every ring collective (ParseColls("all")), datatype
	// and op.
	Colls []Coll
	Types []ringo.DataType
	Ops   []reduce.OpKind
}

// DefaultSoak returns issue 10's soak: 100 000 collectives of up to 64 KiB.
func DefaultSoak() SoakOptions {
	return SoakOptions{N: 100000, MaxBytes: 64 << 10, Seed: 1, Every: 10000, Warmup: 500, Timeout: time.Minute}
}

// Validate checks the options for a communicator of n ranks.
func (o *SoakOptions) Validate(n int) error {
	switch {
	case o.N < 1 || o.Every < 1:
		return fmt.Errorf("soak of %d collectives sampled every %d: need ≥ 1 and ≥ 1", o.N, o.Every)
	case o.Warmup < 0 || o.Warmup > o.N:
		return fmt.Errorf("warm-up of %d collectives outside [0, %d]", o.Warmup, o.N)
	case o.MaxBytes < 0:
		return fmt.Errorf("largest message of %d bytes is negative", o.MaxBytes)
	case o.Timeout <= 0:
		return fmt.Errorf("timeout %v must be positive", o.Timeout)
	case n < 1:
		return fmt.Errorf("communicator of %d ranks", n)
	}
	for _, t := range o.Types {
		if !t.Valid() {
			return fmt.Errorf("invalid datatype %d", t)
		}
	}
	return nil
}

// fill returns the options with nil choices replaced by every one.
func (o SoakOptions) fill() SoakOptions {
	if o.Colls == nil {
		o.Colls, _ = ParseColls("all")
	}
	if o.Types == nil {
		o.Types, _ = ParseTypes("all")
	}
	if o.Ops == nil {
		o.Ops, _ = ParseOps("all")
	}
	return o
}

// Sample is a soak's state after Done collectives: the wrong elements so
// far over every rank, and the figures of the ranks' processes, each taken
// after runtime.GC() and summed over the processes (once per process where
// ranks share one).
type Sample struct {
	Done       int
	Elapsed    time.Duration // since the first collective, on this rank's clock
	Wrong      int64
	HeapAlloc  uint64 // runtime.MemStats.HeapAlloc: the live heap, after a GC
	HeapInuse  uint64
	Sys        uint64
	Goroutines int // runtime.NumGoroutine
	FDs        int // entries of /proc/self/fd
	// Shm counts the /dev/shm entries named as ringo's segments are
	// (shm.SegmentPrefix), of any communicator on the host; every process
	// counts them, so the sum is their number times Procs.
	Shm   int
	Procs int // processes summed over
}

// SoakResult is one rank's outcome of a soak.
type SoakResult struct {
	Samples    []Sample // the same on every rank, Elapsed apart
	FirstWrong string   // this rank's first collective with wrong elements; "" if none
}

// soakCall is one drawn collective.
type soakCall struct {
	coll    Coll
	typ     ringo.DataType
	op      reduce.OpKind // Sum for copies, which have no op
	count   int64
	root    int
	inPlace bool
	seed    uint64 // the data's
}

func (s soakCall) String() string {
	op := opName(s.op)
	if !s.coll.Reduces() {
		op = "none"
	}
	return fmt.Sprintf("%s %v %s count %d root %d in-place %v seed %#x", s.coll, s.typ, op, s.count, s.root, s.inPlace, s.seed)
}

// typeOp is a datatype and an op ringo accepts for it.
type typeOp struct {
	t ringo.DataType
	k reduce.OpKind
}

// validPairs returns the datatypes and ops of o that rank rr can reduce
// with: those whose operator it can make (a mulsum scalar in the type) and
// whose reduction ringo builds.
func (o *SoakOptions) validPairs(rr *rankRun) []typeOp {
	var out []typeOp
	for _, t := range o.Types {
		for _, k := range o.Ops {
			op, err := rr.op(t, k)
			if err != nil {
				continue
			}
			if _, err := reduce.New(t, op, rr.n); err != nil {
				continue
			}
			out = append(out, typeOp{t, k})
		}
	}
	return out
}

// draw returns the next collective: a collective, then a datatype (with an
// op for reductions, one of pairs), a count up to MaxBytes in the larger
// buffer, at a scale drawn first so that small counts (0, 1, odd) come as
// often as large ones, a root and a placement, and the data's seed.
func (o *SoakOptions) draw(rng *rand.Rand, pairs []typeOp, n int) soakCall {
	s := soakCall{coll: o.Colls[rng.IntN(len(o.Colls))], op: reduce.Sum}
	if s.coll.Reduces() && len(pairs) > 0 {
		p := pairs[rng.IntN(len(pairs))]
		s.typ, s.op = p.t, p.k
	} else {
		s.typ = o.Types[rng.IntN(len(o.Types))]
	}
	most := o.MaxBytes / int64(s.typ.Size())
	if s.coll.blocks() {
		most /= int64(n)
	}
	scale := int64(1) << rng.IntN(bits.Len64(uint64(most))+1)
	s.count = rng.Int64N(min(most, scale) + 1)
	s.root = rng.IntN(n)
	s.inPlace = s.coll.runsInPlace() && rng.IntN(2) == 1
	s.seed = rng.Uint64()
	return s
}

// soakStream is the second word of the draws' PCG seed.
const soakStream = 0x736f616b // "soak"

// SoakRank runs the soak o on c's rank, a rank of a host communicator.
// Every rank of the communicator must call it with the same options. sample,
// if not nil, sees each sample as it is taken: after the warm-up, every
// Every collectives and after the last. It returns an error, naming the
// collective, as soon as one fails or takes longer than o.Timeout; wrong
// elements are counted, not errors (see Verdict).
func SoakRank(ctx context.Context, c *ringo.Comm, o SoakOptions, sample func(Sample)) (SoakResult, error) {
	if err := o.Validate(c.Size()); err != nil {
		return SoakResult{}, err
	}
	t, err := newHostTargetFor(ctx, c, max(o.MaxBytes, 64), o.Windows)
	if err != nil {
		return SoakResult{}, err
	}
	defer t.close()
	return soakRank(ctx, c, c, t, o, sample, nil)
}

// SoakGPURank is SoakRank on c's rank of a GPU communicator: the buffers in
// GPU memory (each collective's inputs uploaded, its outputs downloaded and
// checked on the host), the collectives on a stream of their own. agg is a
// host communicator of the same ranks, which the ranks use to agree on the
// samples (as in RunGPURank).
func SoakGPURank(ctx context.Context, c, agg *ringo.Comm, o SoakOptions, sample func(Sample)) (SoakResult, error) {
	if err := o.Validate(c.Size()); err != nil {
		return SoakResult{}, err
	}
	if agg.Size() != c.Size() || agg.Rank() != c.Rank() || agg.GPU() >= 0 {
		return SoakResult{}, fmt.Errorf("soak: the aggregating communicator must be a host rank %d of %d", c.Rank(), c.Size())
	}
	t, err := newGPUTarget(ctx, c, max(o.MaxBytes, 64), false)
	if err != nil {
		return SoakResult{}, err
	}
	defer t.close()
	return soakRank(ctx, c, agg, t, o, sample, nil)
}

// soakRank runs the validated soak o on t, aggregating over agg; after, if
// not nil, sees every collective's layout and this rank's output in the
// host buffer right after the collective, before the check (tests corrupt
// it there; host targets only: a GPU target's download overwrites it).
func soakRank(ctx context.Context, c, agg *ringo.Comm, t target, o SoakOptions, sample func(Sample), after func(*layout, []byte)) (SoakResult, error) {
	var res SoakResult
	n := c.Size()
	o = o.fill()
	opts := &Options{} // the layout's root changes with every draw
	rr := newRankRun(ctx, c, agg, t, opts)
	if after != nil {
		run := rr.do
		rr.do = func(l *layout) error {
			if err := run(l); err != nil {
				return err
			}
			after(l, t.buffers()[l.outBuf][l.outOff:l.outOff+l.outLen])
			return nil
		}
	}
	// bounded runs f with every call on the communicators limited to
	// o.Timeout.
	bounded := func(f func() error) error {
		tctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		rr.ctx = tctx
		t.setContext(tctx)
		return f()
	}
	var sole bool
	if err := bounded(func() (err error) { sole, err = soleInProcess(rr); return err }); err != nil {
		return res, fmt.Errorf("rank %d: %w", rr.rank, err)
	}
	pairs := o.validPairs(rr)
	rng := rand.New(rand.NewPCG(o.Seed, soakStream))
	var wrong int64
	start := time.Now()
	for done := 1; done <= o.N; done++ {
		s := o.draw(rng, pairs, n)
		op, err := rr.op(s.typ, s.op)
		if err != nil {
			return res, fmt.Errorf("rank %d, collective %d (%v): %w", rr.rank, done, s, err)
		}
		opts.Root = s.root
		l := rr.layout(s.coll, s.typ, op, s.count, s.inPlace)
		var w int64
		err = bounded(func() (err error) { w, err = rr.check(&l, s.op, s.seed, nil); return err })
		if err != nil {
			return res, fmt.Errorf("rank %d, collective %d (%v): %w", rr.rank, done, s, err)
		}
		if w > 0 && res.FirstWrong == "" {
			res.FirstWrong = fmt.Sprintf("rank %d, collective %d (%v): %d wrong elements", rr.rank, done, s, w)
		}
		wrong += w
		if done < o.Warmup || (done != o.Warmup && done%o.Every != 0 && done != o.N) {
			continue
		}
		var smp Sample
		if err := bounded(func() (err error) { smp, err = takeSample(rr, sole, wrong); return err }); err != nil {
			return res, fmt.Errorf("rank %d, sampling after collective %d: %w", rr.rank, done, err)
		}
		smp.Done, smp.Elapsed = done, time.Since(start)
		res.Samples = append(res.Samples, smp)
		if sample != nil {
			sample(smp)
		}
	}
	return res, nil
}

// soleInProcess reports whether rr's rank is the lowest of the ranks in
// its process (it samples the process for them all).
func soleInProcess(rr *rankRun) (bool, error) {
	pids := make([]int64, rr.n)
	if err := ringo.AllGather(rr.ctx, rr.agg, []int64{int64(os.Getpid())}, pids); err != nil {
		return false, fmt.Errorf("gathering process ids: %w", err)
	}
	for r := range rr.rank {
		if pids[r] == pids[rr.rank] {
			return false, nil
		}
	}
	return true, nil
}

// takeSample waits for every rank, then samples this process if sole and
// returns the figures summed over the ranks, with wrong (this rank's wrong
// elements) summed too.
func takeSample(rr *rankRun, sole bool, wrong int64) (Sample, error) {
	if err := rr.barrier(); err != nil {
		return Sample{}, err
	}
	var local [8]float64
	local[0] = float64(wrong)
	if sole {
		p, err := processFigures()
		if err != nil {
			return Sample{}, err
		}
		local[1], local[2], local[3] = float64(p.HeapAlloc), float64(p.HeapInuse), float64(p.Sys)
		local[4], local[5], local[6], local[7] = float64(p.Goroutines), float64(p.FDs), float64(p.Shm), 1
	}
	var sum [8]float64
	for i, v := range local {
		var err error
		if sum[i], err = rr.sum(v); err != nil {
			return Sample{}, err
		}
	}
	return Sample{Wrong: int64(sum[0]), HeapAlloc: uint64(sum[1]), HeapInuse: uint64(sum[2]), Sys: uint64(sum[3]),
		Goroutines: int(sum[4]), FDs: int(sum[5]), Shm: int(sum[6]), Procs: int(sum[7])}, nil
}

// processFigures samples this process after a garbage collection.
func processFigures() (Sample, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return Sample{}, fmt.Errorf("counting file descriptors: %w", err)
	}
	segs, err := sys.ListSegments(shmPrefix())
	if err != nil {
		return Sample{}, fmt.Errorf("listing shared memory segments: %w", err)
	}
	return Sample{HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse, Sys: ms.Sys, Goroutines: runtime.NumGoroutine(),
		FDs: len(fds), Shm: len(segs)}, nil
}

// shmPrefix is what every ringo segment name begins with: the part of
// shm.SegmentPrefix before the communicator's tag.
func shmPrefix() string {
	p := shm.SegmentPrefix("\x00")
	return p[:strings.IndexByte(p, 0)]
}

// Heap bound of Verdict. After runtime.GC(), HeapAlloc is the live heap:
// the ranks' buffers, the communicators and their caches, which a soak that
// leaks nothing holds at the same size throughout. It still moves a little
// with what the last collectives left (the reduction cache's entries, the
// runtime's own structures, timers of the per-call contexts), by amounts
// that matter only against a heap of a few MiB: 4 MiB of slack absorbs
// them, and half the first sample again scales the bound for large
// messages. A leak of 64 bytes per collective over 100 000 collectives
// (6.1 MiB) already exceeds it for a first heap up to 4 MiB.
const (
	heapGrowth = 1.5
	heapSlack  = 4 << 20
)

// Verdict judges a soak's samples: no wrong element; as many goroutines
// and file descriptors at the last sample as at the first; a live heap at
// the last sample of at most 1.5× the first's plus 4 MiB. It returns one
// line per figure (shared memory segments are reported, not judged: they
// are the host's, other jobs' included, and ringo unlinks its own names as
// soon as a communicator is set up) and an error naming what failed.
func Verdict(samples []Sample) ([]string, error) {
	if len(samples) == 0 {
		return nil, errors.New("soak: no sample taken")
	}
	first, last := samples[0], samples[len(samples)-1]
	var lines, failed []string
	judge := func(name string, ok bool, detail string) {
		verdict := "OK"
		if !ok {
			verdict = "FAILED"
			failed = append(failed, name)
		}
		lines = append(lines, fmt.Sprintf("%-14s %s %s", name+":", detail, verdict))
	}
	judge("wrong", last.Wrong == 0, fmt.Sprintf("%d elements in %d collectives", last.Wrong, last.Done))
	judge("goroutines", last.Goroutines == first.Goroutines, fmt.Sprintf("%d → %d", first.Goroutines, last.Goroutines))
	judge("fds", last.FDs == first.FDs, fmt.Sprintf("%d → %d", first.FDs, last.FDs))
	bound := heapGrowth*float64(first.HeapAlloc) + heapSlack
	judge("heap", float64(last.HeapAlloc) <= bound, fmt.Sprintf("%.2f → %.2f MiB (bound 1.5× + 4 MiB = %.2f MiB)",
		mib(first.HeapAlloc), mib(last.HeapAlloc), bound/(1<<20)))
	lines = append(lines, fmt.Sprintf("%-14s %d → %d (reported, not judged)", "shm segments:", first.Shm, last.Shm))
	if len(failed) > 0 {
		return lines, fmt.Errorf("soak failed: %s", strings.Join(failed, ", "))
	}
	return lines, nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// WriteSoakHeader prints the column names of WriteSoakSample's lines.
func WriteSoakHeader(w io.Writer) {
	fmt.Fprintf(w, "#%12s %10s %10s %8s %10s %10s %9s %11s %6s %5s\n",
		"collectives", "elapsed_s", "coll/s", "wrong", "heap_MiB", "inuse_MiB", "sys_MiB", "goroutines", "fds", "shm")
}

// WriteSoakSample prints one sample as a table line.
func WriteSoakSample(w io.Writer, s Sample) {
	sec := s.Elapsed.Seconds()
	rate := 0.0
	if sec > 0 {
		rate = float64(s.Done) / sec
	}
	fmt.Fprintf(w, "%13d %10.1f %10.0f %8d %10.2f %10.2f %9.2f %11d %6d %5d\n",
		s.Done, sec, rate, s.Wrong, mib(s.HeapAlloc), mib(s.HeapInuse), mib(s.Sys), s.Goroutines, s.FDs, s.Shm)
}
