package reduce

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// TestWire: each pair's hop is one float32 addition rounded once to the
// wire type, the output the wire value converted back; the byte loops do
// not allocate; other pairs are refused.
func TestWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	for _, c := range []struct {
		buf, on    DataType
		toBuf, toW func(float32) float32 // rounding to each type, as float32
	}{
		{Float32, BF16, func(f float32) float32 { return f }, func(f float32) float32 { return BFloat16From(f).Float32() }},
		{Half, Float32, func(f float32) float32 { return Float16From(f).Float32() }, func(f float32) float32 { return f }},
		{BF16, Float32, func(f float32) float32 { return BFloat16From(f).Float32() }, func(f float32) float32 { return f }},
	} {
		w, err := NewWire(c.buf, c.on)
		if err != nil {
			t.Fatal(err)
		}
		in := [3][]byte{}
		vals := [3][]float32{}
		for r := range in {
			in[r] = make([]byte, n*c.buf.Size())
			vals[r] = make([]float32, n)
			for i := range n {
				v := c.toBuf(float32(rng.Float64()*2 - 1))
				vals[r][i] = v
				put32(c.buf, in[r], i, v)
			}
		}
		wire := make([]byte, n*c.on.Size())
		out := make([]byte, n*c.buf.Size())
		w.Send(wire, in[0])
		w.Add(wire, wire, in[1])
		w.Add(wire, wire, in[2])
		w.Final(out, wire)
		fin := make([]byte, len(out))
		w.Send(wire, in[0])
		w.Add(wire, wire, in[1])
		w.AddFinal(fin, wire, in[2])
		for i := range n {
			want := c.toBuf(c.toW(c.toW(c.toW(vals[0][i])+vals[1][i]) + vals[2][i]))
			if got := get32(c.buf, out, i); got != want {
				t.Fatalf("%v over %v element %d: %v, want %v", c.buf, c.on, i, got, want)
			}
			if get32(c.buf, fin, i) != want {
				t.Fatalf("%v over %v element %d: AddFinal %v, want %v", c.buf, c.on, i, get32(c.buf, fin, i), want)
			}
		}
		if a := testing.AllocsPerRun(10, func() { w.Add(wire, wire, in[1]); w.Final(out, wire) }); a != 0 {
			t.Errorf("%v over %v: %v allocations per hop", c.buf, c.on, a)
		}
	}
	if _, err := NewWire(Float32, Half); err == nil || !strings.Contains(err.Error(), "no float sum over a half wire") {
		t.Errorf("float32 over float16: %v", err)
	}
}

func put32(t DataType, b []byte, i int, v float32) {
	switch t {
	case Float32:
		mem.Slice[float32](b)[i] = v
	case Half:
		mem.Slice[Float16](b)[i] = Float16From(v)
	case BF16:
		mem.Slice[BFloat16](b)[i] = BFloat16From(v)
	}
}

func get32(t DataType, b []byte, i int) float32 {
	switch t {
	case Half:
		return mem.Slice[Float16](b)[i].Float32()
	case BF16:
		return mem.Slice[BFloat16](b)[i].Float32()
	}
	return math.Float32frombits(mem.Slice[uint32](b)[i])
}
