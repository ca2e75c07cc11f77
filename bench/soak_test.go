package bench

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// soakAll runs the soak o on n loopback ranks; after, if not nil, makes
// each rank's hook.
func soakAll(t *testing.T, n int, o SoakOptions, after func(rank int) func(*layout, []byte)) []SoakResult {
	t.Helper()
	res := make([]SoakResult, n)
	eachLocalRank(t, n, func(r int, c *ringo.Comm) (err error) {
		var hook func(*layout, []byte)
		if after != nil {
			hook = after(r)
		}
		res[r], err = soakRank(context.Background(), c, c, newHostTarget(context.Background(), c, max(o.MaxBytes, 64)), o, nil, hook)
		return err
	})
	return res
}

func shortSoak() SoakOptions {
	o := DefaultSoak()
	o.N, o.Every, o.Warmup, o.MaxBytes, o.Seed = 300, 100, 50, 16<<10, 7
	o.Timeout = 30 * time.Second
	return o
}

// TestSoakIsCorrect: a short soak on 3 loopback ranks finds nothing wrong,
// samples where it says, the same on every rank, and stays flat.
func TestSoakIsCorrect(t *testing.T) {
	res := soakAll(t, 3, shortSoak(), nil)
	s := res[0].Samples
	done := []int{}
	for _, x := range s {
		done = append(done, x.Done)
		if x.Wrong != 0 || x.Procs != 1 || x.Goroutines <= 0 || x.FDs <= 0 || x.HeapAlloc == 0 {
			t.Errorf("sample %+v", x)
		}
	}
	if len(done) != 4 || done[0] != 50 || done[1] != 100 || done[3] != 300 {
		t.Fatalf("samples after %v collectives, want 50 100 200 300", done)
	}
	for r := range res {
		if res[r].FirstWrong != "" {
			t.Errorf("rank %d: %s", r, res[r].FirstWrong)
		}
		for i, x := range res[r].Samples {
			if x.Wrong != s[i].Wrong || x.Goroutines != s[i].Goroutines || x.HeapAlloc != s[i].HeapAlloc {
				t.Errorf("rank %d's sample %d %+v differs from rank 0's %+v", r, i, x, s[i])
			}
		}
	}
	if s[0].Goroutines != s[3].Goroutines {
		t.Errorf("goroutines %d → %d", s[0].Goroutines, s[3].Goroutines)
	}
	if lines, err := Verdict(s); err != nil {
		t.Errorf("%v\n%s", err, strings.Join(lines, "\n"))
	}
}

// TestSoakFindsCorruption: rank 1 spoils one output element of every
// collective whose output it checks exactly; the soak counts each one, and
// the verdict fails.
func TestSoakFindsCorruption(t *testing.T) {
	spoiled := 0
	hook := func(rank int) func(*layout, []byte) {
		if rank != 1 {
			return nil
		}
		return func(l *layout, out []byte) {
			if len(out) == 0 || (l.coll == Reduce && l.root != rank) || (l.coll.Reduces() && l.op.Kind() == reduce.Avg) {
				return // nothing checked here, or checked within a tolerance
			}
			out[l.typ.Size()-1] ^= 0x40 // element 0's top byte: an exponent bit, or a high bit of an integer
			spoiled++
		}
	}
	res := soakAll(t, 3, shortSoak(), hook)
	last := res[0].Samples[len(res[0].Samples)-1]
	if spoiled == 0 || last.Wrong != int64(spoiled) {
		t.Fatalf("%d elements spoiled, the soak counted %d", spoiled, last.Wrong)
	}
	if res[1].FirstWrong == "" || res[0].FirstWrong != "" || res[2].FirstWrong != "" {
		t.Errorf("first wrong collectives by rank: %q", []string{res[0].FirstWrong, res[1].FirstWrong, res[2].FirstWrong})
	}
	if _, err := Verdict(res[0].Samples); err == nil || !strings.Contains(err.Error(), "wrong") {
		t.Errorf("verdict %v, want a failure for wrong elements", err)
	}
}

// TestSoakDraws: the draws cover every collective, datatype, op, root and
// placement, counts 0, 1, odd and the largest, and stay within MaxBytes.
func TestSoakDraws(t *testing.T) {
	o := DefaultSoak().fill()
	const n = 4
	var pairs []typeOp
	for _, dt := range o.Types {
		for _, k := range o.Ops {
			pairs = append(pairs, typeOp{dt, k})
		}
	}
	rng := rand.New(rand.NewPCG(1, soakStream))
	seen := map[any]bool{}
	odd, largest := false, false
	for range 20000 {
		s := o.draw(rng, pairs, n)
		in := s.count * int64(s.typ.Size())
		if s.coll.blocks() {
			in *= n
		}
		if in > o.MaxBytes {
			t.Fatalf("%v: %d bytes, more than %d", s, in, o.MaxBytes)
		}
		largest = largest || in > o.MaxBytes-int64(n*8)
		odd = odd || (s.count%2 == 1 && s.count > 1)
		for _, k := range []any{s.coll, s.typ, s.root, s.inPlace} {
			seen[k] = true
		}
		if s.coll.Reduces() {
			seen[s.op] = true
		}
		seen[[2]int64{0, min(s.count, 2)}] = true
	}
	want := len(o.Colls) + len(o.Types) + n + 2 + len(o.Ops) + 3
	if len(seen) != want || !odd || !largest {
		t.Errorf("%d distinct choices of %d, odd counts %v, largest %v: %v", len(seen), want, odd, largest, seen)
	}
}

// TestSoakVerdict: each figure that grows fails the verdict.
func TestSoakVerdict(t *testing.T) {
	first := Sample{Done: 500, HeapAlloc: 2 << 20, Goroutines: 10, FDs: 8}
	ok := first
	ok.Done, ok.HeapAlloc = 100000, 7<<20 // within 1.5 × 2 + 4 = 7 MiB
	if lines, err := Verdict([]Sample{first, ok}); err != nil || len(lines) != 5 {
		t.Fatalf("flat soak: %v\n%s", err, strings.Join(lines, "\n"))
	}
	bad := map[string]func(*Sample){
		"wrong":      func(s *Sample) { s.Wrong = 1 },
		"goroutines": func(s *Sample) { s.Goroutines++ },
		"fds":        func(s *Sample) { s.FDs-- },
		"heap":       func(s *Sample) { s.HeapAlloc = 7<<20 + 1 },
	}
	for name, mod := range bad {
		last := ok
		mod(&last)
		if _, err := Verdict([]Sample{first, last}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: verdict %v", name, err)
		}
	}
	if _, err := Verdict(nil); err == nil {
		t.Error("no samples accepted")
	}
}
