package bench

import (
	"fmt"
	"strings"

	"github.com/ringo-ccl/ringo"
	"github.com/ringo-ccl/ringo/reduce"
)

// Options describe a sweep, in nccl-tests' terms.
type Options struct {
	Colls      []Coll
	Types      []ringo.DataType
	Ops        []reduce.OpKind // reduce.PreMulSum is nccl-tests' "mulsum": scalar 1 on even ranks, 2 on odd
	MinBytes   int64           // -b
	MaxBytes   int64           // -e
	StepFactor int64           // -f; 0 uses StepBytes
	StepBytes  int64           // -i
	Iters      int             // -n
	Warmup     int             // -w
	Check      int             // -c: correctness iterations per size (0: off)
	Root       int             // -r
	Unalign    int64           // -u: shift every buffer by this many elements
	Counts     []int64         // explicit counts (NCCL's count) to run instead of the size sweep
	// Graph (-G, nccl-tests' flag) > 0 times CUDA graphs: each size's
	// Iters calls are captured into one graph, replayed Graph times, and
	// the time is per call; each check replays a graph of one call. GPU
	// targets only.
	Graph int
	// Windows (-R, as nccl-tests' -R 2) registers each rank's send and
	// receive buffers as windows: a GPU rank's (Comm.RegisterWindow),
	// which direct all-reduces between processes read in place, or a host
	// rank's, then allocated by ringo.HostAlloc (RegisterHostWindow), which
	// the collectives of processes of one host too large for the board's
	// one exchange read and write in place.
	Windows bool
	// Error (-error) checks with random inputs in [−1, 1) instead of exact
	// ones: each output element must be the sum the call's arithmetic
	// makes (in the order of one rotation of the ring, rounded as partial
	// sums travel: a precision variant's wire type, or the buffers' type),
	// and each row reports its relative RMS error against the exact sum.
	// All-reduce of float32, float16 or bfloat16 sums only.
	Error bool
}

// shape is one message of a sweep: NCCL's count, and the elements of the
// larger buffer (what the table's size and count columns show).
type shape struct{ count, elems int64 }

// shapes returns the messages of the sweep for a collective and type.
func (o *Options) shapes(coll Coll, t ringo.DataType, n int) []shape {
	segmented := coll.blocks()
	var out []shape
	if len(o.Counts) > 0 {
		for _, c := range o.Counts {
			e := c
			if segmented {
				e *= int64(n)
			}
			out = append(out, shape{c, e})
		}
		return out
	}
	for _, size := range o.Sizes() {
		e := size / int64(t.Size())
		c := e
		if segmented {
			c = e / int64(n)
			e = c * int64(n)
		}
		out = append(out, shape{c, e})
	}
	return out
}

// maxBytes is the largest buffer any message of the sweep needs.
func (o *Options) maxBytes(n int) int64 {
	var m int64
	for _, coll := range o.Colls {
		for _, t := range o.Types {
			for _, sh := range o.shapes(coll, t, n) {
				m = max(m, (sh.elems+o.Unalign)*int64(t.Size()))
			}
		}
	}
	return max(m, 64)
}

// RankBytes is the memory a rank of n takes for the sweep's buffers: a
// send and a receive buffer of its largest message (in host memory, and in
// GPU memory too for a GPU rank, whose host buffers stage the checks).
func (o *Options) RankBytes(n int) int64 { return 2 * o.maxBytes(n) }

// Defaults returns nccl-tests' defaults with ringo's all-reduce of float sum.
func Defaults() Options {
	return Options{
		Colls: []Coll{AllReduce}, Types: []ringo.DataType{ringo.TypeFloat32}, Ops: []reduce.OpKind{reduce.Sum},
		MinBytes: 32 << 20, MaxBytes: 32 << 20, StepBytes: 1 << 20, Iters: 20, Warmup: 1, Check: 1,
	}
}

// Validate checks the options for a communicator of n ranks.
func (o *Options) Validate(n int) error {
	switch {
	case len(o.Colls) == 0 || len(o.Types) == 0 || len(o.Ops) == 0:
		return fmt.Errorf("no collective, datatype or op selected")
	case o.MinBytes < 0 || o.MaxBytes < o.MinBytes:
		return fmt.Errorf("sizes %d…%d bytes are not a range", o.MinBytes, o.MaxBytes)
	case o.StepFactor == 1 || o.StepFactor < 0:
		return fmt.Errorf("step factor %d must be 0 (additive steps) or at least 2", o.StepFactor)
	case o.StepFactor == 0 && o.StepBytes <= 0:
		return fmt.Errorf("step of %d bytes must be positive", o.StepBytes)
	case o.Iters < 1 || o.Warmup < 0 || o.Check < 0:
		return fmt.Errorf("iterations %d, warm-up %d, checks %d: need ≥ 1, ≥ 0, ≥ 0", o.Iters, o.Warmup, o.Check)
	case o.Graph < 0:
		return fmt.Errorf("graph launches %d: need ≥ 0", o.Graph)
	case o.Root < 0 || o.Root >= n:
		return fmt.Errorf("root %d outside [0, %d)", o.Root, n)
	case o.Unalign < 0:
		return fmt.Errorf("unalignment of %d elements is negative", o.Unalign)
	}
	if o.Error {
		if err := o.validError(); err != nil {
			return err
		}
	}
	for _, c := range o.Counts {
		if c < 0 {
			return fmt.Errorf("count %d is negative", c)
		}
	}
	for _, t := range o.Types {
		if !t.Valid() {
			return fmt.Errorf("invalid datatype %d", t)
		}
	}
	return nil
}

// Sizes returns the message sizes of the sweep.
func (o *Options) Sizes() []int64 {
	var s []int64
	for b := o.MinBytes; b <= o.MaxBytes; {
		s = append(s, b)
		next := b + o.StepBytes
		if o.StepFactor > 1 {
			next = b * o.StepFactor
			if b == 0 {
				next = 1
			}
		}
		if next <= b {
			break
		}
		b = next
	}
	return s
}

// ParseTypes parses a datatype name or "all".
func ParseTypes(s string) ([]ringo.DataType, error) {
	if strings.EqualFold(s, "all") {
		var out []ringo.DataType
		for t := range reduce.NumTypes {
			out = append(out, t)
		}
		return out, nil
	}
	t, err := reduce.ParseDataType(s)
	if err != nil {
		return nil, err
	}
	return []ringo.DataType{t}, nil
}

// ParseOps parses an op name (sum, prod, min, max, avg, mulsum) or "all".
func ParseOps(s string) ([]reduce.OpKind, error) {
	switch strings.ToLower(s) {
	case "all":
		return []reduce.OpKind{reduce.Sum, reduce.Prod, reduce.Max, reduce.Min, reduce.Avg, reduce.PreMulSum}, nil
	case "mulsum", "premulsum":
		return []reduce.OpKind{reduce.PreMulSum}, nil
	}
	op, err := reduce.ParseOp(s)
	if err != nil {
		return nil, fmt.Errorf("%v (or mulsum, all)", err)
	}
	return []reduce.OpKind{op.Kind()}, nil
}

// opName is nccl-tests' name of an op kind.
func opName(k reduce.OpKind) string {
	if k == reduce.PreMulSum {
		return "mulsum"
	}
	return k.String()
}

// validError reports what the error mode cannot check.
func (o *Options) validError() error {
	for _, c := range o.Colls {
		if c != AllReduce {
			return fmt.Errorf("-error checks all-reduce only, not %v", c)
		}
	}
	for _, k := range o.Ops {
		if k != reduce.Sum {
			return fmt.Errorf("-error checks sums only, not %v", opName(k))
		}
	}
	for _, t := range o.Types {
		if t != ringo.TypeFloat32 && t != ringo.TypeFloat16 && t != ringo.TypeBFloat16 {
			return fmt.Errorf("-error checks float32, float16 and bfloat16, not %v", t)
		}
	}
	return nil
}
