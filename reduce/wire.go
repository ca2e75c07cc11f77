package reduce

import (
	"fmt"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// Wire is the arithmetic of a precision variant's sum: buffers hold Buf,
// the ring's FIFOs carry On, and every hop adds in float32 — the received
// value widened plus the local input widened — then rounds once to On. What
// a rank writes to its output is always the value as it travelled,
// converted to Buf, so every rank ends with the same bits. It matches
// kernels/src/wire.cuh bit for bit.
type Wire struct {
	buf, on DataType
	send    func(w, in []byte)      // w = On(in)
	add     func(w, a, in []byte)   // w = On(a + in)
	final   func(out, w []byte)     // out = Buf(w)
	addFin  func(out, a, in []byte) // out = Buf(On(a + in))
}

// NewWire returns the sum of buf buffers over an on wire: float32 over
// bfloat16 (the compressed all-reduce), or float16 or bfloat16 over float32
// (partial sums in full precision).
func NewWire(buf, on DataType) (*Wire, error) {
	w := &Wire{buf: buf, on: on}
	switch {
	case buf == Float32 && on == BF16:
		bindWire(w, f32.wide, f32.narrow, bf16.wide, bf16.narrow)
	case buf == Half && on == Float32:
		bindWire(w, f16.wide, f16.narrow, f32.wide, f32.narrow)
	case buf == BF16 && on == Float32:
		bindWire(w, bf16.wide, bf16.narrow, f32.wide, f32.narrow)
	default:
		return nil, fmt.Errorf("no %v sum over a %v wire (float32 over bfloat16, float16 or bfloat16 over float32)", buf, on)
	}
	return w, nil
}

// Buf and On return the buffers' and the wire's types.
func (w *Wire) Buf() DataType { return w.buf }
func (w *Wire) On() DataType  { return w.on }

// Send sets wire = On(in): the local input as it goes out on a ring's first
// send.
func (w *Wire) Send(wire, in []byte) { w.send(wire, in) }

// Add sets wire = On(acc + in), acc arriving from the ring in On and in the
// local input in Buf.
func (w *Wire) Add(wire, acc, in []byte) { w.add(wire, acc, in) }

// Final sets out = Buf(wire).
func (w *Wire) Final(out, wire []byte) { w.final(out, wire) }

// AddFinal sets out = Buf(On(acc + in)) element by element, without a wire
// buffer: the last reduction of a chunk that is not sent on.
func (w *Wire) AddFinal(out, acc, in []byte) { w.addFin(out, acc, in) }

// conv is one float type's conversions to and from float32.
type conv[T any] struct {
	wide   func(T) float32
	narrow func(float32) T
}

var (
	f32  = conv[float32]{func(x float32) float32 { return x }, func(f float32) float32 { return f }}
	f16  = conv[Float16]{Float16.Float32, Float16From}
	bf16 = conv[BFloat16]{BFloat16.Float32, BFloat16From}
)

func bindWire[B, W any](w *Wire, bWide func(B) float32, bNarrow func(float32) B, wWide func(W) float32, wNarrow func(float32) W) {
	w.send = func(wire, in []byte) {
		d, s := mem.Slice[W](wire), mem.Slice[B](in)
		for i := range d {
			d[i] = wNarrow(bWide(s[i]))
		}
	}
	w.add = func(wire, acc, in []byte) {
		d, a, s := mem.Slice[W](wire), mem.Slice[W](acc), mem.Slice[B](in)
		for i := range d {
			d[i] = wNarrow(wWide(a[i]) + bWide(s[i]))
		}
	}
	w.addFin = func(out, acc, in []byte) {
		d, a, s := mem.Slice[B](out), mem.Slice[W](acc), mem.Slice[B](in)
		for i := range d {
			d[i] = bNarrow(wWide(wNarrow(wWide(a[i]) + bWide(s[i]))))
		}
	}
	w.final = func(out, wire []byte) {
		d, s := mem.Slice[B](out), mem.Slice[W](wire)
		for i := range d {
			d[i] = bNarrow(wWide(s[i]))
		}
	}
}
