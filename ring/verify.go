package ring

import (
	"fmt"
	"math/bits"
	"strings"
)

// Verify executes plans symbolically — plans[r] must be rank r's plan of the
// same collective, or every rank's point-to-point plan (NewP2P) of one
// group — and reports the first violated invariant:
//
//   - the ring runs to completion: every receive finds data, no FIFO holds
//     more than NSteps slots, every FIFO is empty at the end;
//   - a receiver expects exactly the slice lengths its sender sent;
//   - every element of a reduction is combined exactly once from every rank,
//     always with the same element of the other ranks;
//   - every output element is written exactly once, with the right data, and
//     nothing outside the buffers is read or written;
//   - slices fit their FIFO slots, and chunk and slice offsets are aligned
//     inside each rank's segment as Plan.AlignmentElems promises.
//
// For point-to-point plans the result checked is the messages' delivery:
// every send matches a receive (by order per pair, with the same count),
// each receive's place in the receiver's output holds exactly the sender's
// elements, and no other output element is written. Collectives' plans may
// use SendRecv steps too (a direct all-gather, say): each half is checked
// as a Send or a Recv would be, the send half of a slice before its receive
// half, as the executors run them.
//
// Verify tracks, for every element, the set of ranks it holds contributions
// from, so it handles up to 64 ranks. It is meant for tests of plan
// generators: it allocates in proportion to the data.
func Verify(plans []*Plan) error {
	v, err := newVerifier(plans)
	if err != nil {
		return err
	}
	if err := v.run(); err != nil {
		return err
	}
	return v.checkOutputs()
}

// token is the symbolic value of one element: the set of ranks whose input
// it contains and the element index, in the input buffer, it came from.
type token struct {
	mask uint64
	idx  int64
}

type connKey struct{ from, to, ch int }

// cursor is where a rank's channel is: its step, the slice, and for a
// SendRecv whether the slice's send half is done.
type cursor struct {
	step, slice int
	sent        bool
}

type verifier struct {
	plans []*Plan
	n     int
	spec  Spec
	in    [][]token
	out   [][]token
	fifo  map[connKey]*queue
	cur   [][]cursor // [rank][channel]
	want  [][]token  // point-to-point: each rank's expected output
}

func newVerifier(plans []*Plan) (*verifier, error) {
	n := len(plans)
	if n == 0 || n > 64 {
		return nil, fmt.Errorf("verify: %d plans, need 1…64", n)
	}
	s0 := plans[0].Spec
	for r, p := range plans {
		s := p.Spec
		if s.Rank != r {
			return nil, fmt.Errorf("verify: plans[%d] is rank %d's plan", r, s.Rank)
		}
		if s.Coll != s0.Coll || s.Count != s0.Count || s.EltSize != s0.EltSize || s.Channels != s0.Channels ||
			s.Proto != s0.Proto || s.BuffSize != s0.BuffSize || s.Variant != s0.Variant || (s.Coll.Rooted() && s.Root != s0.Root) ||
			!sameOrder(s.Ring, s0.Ring) {
			return nil, fmt.Errorf("verify: rank %d's spec differs from rank 0's", r)
		}
		if len(p.Channels) != s.Channels {
			return nil, fmt.Errorf("verify: rank %d has %d channels, spec says %d", r, len(p.Channels), s.Channels)
		}
		if s.Coll.P2P() != (p.P2P != nil) {
			return nil, fmt.Errorf("verify: rank %d's plan of %v has no point-to-point transfers, or a collective's has", r, s.Coll)
		}
	}
	if s0.Ring.Size() != n {
		return nil, fmt.Errorf("verify: %d plans for a ring of %d", n, s0.Ring.Size())
	}
	v := &verifier{plans: plans, n: n, spec: s0, fifo: map[connKey]*queue{}}
	for r, p := range plans {
		inLen, outLen := s0.InputLen(), s0.OutputLen()
		if p.P2P != nil {
			inLen, outLen = p.P2P.InputLen(), p.P2P.OutputLen()
		}
		in := make([]token, inLen)
		for i := range in {
			in[i] = token{mask: 1 << r, idx: int64(i)}
		}
		v.in = append(v.in, in)
		v.out = append(v.out, make([]token, outLen))
		v.cur = append(v.cur, make([]cursor, s0.Channels))
	}
	if s0.Coll.P2P() {
		want, err := p2pOutputs(plans)
		if err != nil {
			return nil, err
		}
		v.want = want
	}
	return v, nil
}

func sameOrder(a, b Ring) bool {
	if len(a.Order) != len(b.Order) {
		return false
	}
	for i := range a.Order {
		if a.Order[i] != b.Order[i] {
			return false
		}
	}
	return true
}

func (v *verifier) run() error {
	for {
		progress, pending := false, false
		for r := range v.n {
			for c := range v.spec.Channels {
				for {
					ok, done, err := v.advance(r, c)
					if err != nil {
						return err
					}
					if !done {
						pending = true
					}
					if !ok {
						break
					}
					progress = true
				}
			}
		}
		if !pending {
			break
		}
		if !progress {
			return v.deadlock()
		}
	}
	for k, q := range v.fifo {
		if len(q.units) > 0 {
			return fmt.Errorf("verify: %d slices left unread on ch%d from rank %d to rank %d", len(q.units), k.ch, k.from, k.to)
		}
	}
	return nil
}

func (v *verifier) deadlock() error {
	var b strings.Builder
	for r := range v.n {
		for c := range v.spec.Channels {
			cur := v.cur[r][c]
			steps := v.plans[r].Channels[c].Steps
			if cur.step < len(steps) {
				fmt.Fprintf(&b, " rank %d ch%d step %d (%v) slice %d;", r, c, cur.step, steps[cur.step].Prim, cur.slice)
			}
		}
	}
	return fmt.Errorf("verify: ring deadlocks:%s", b.String())
}

// advance executes the next slice of rank r on channel c. ok reports
// progress; done that the channel's program has finished.
func (v *verifier) advance(r, c int) (ok, done bool, err error) {
	p := v.plans[r]
	steps := p.Channels[c].Steps
	cur := &v.cur[r][c]
	if cur.step >= len(steps) {
		return false, true, nil
	}
	st := &steps[cur.step]
	where := func(format string, a ...any) error {
		return fmt.Errorf("verify: %v rank %d ch%d step %d (%v) slice %d: %s",
			v.spec.Coll, r, c, cur.step, st.Prim, cur.slice, fmt.Sprintf(format, a...))
	}
	if !st.Prim.Valid() {
		return false, false, where("invalid primitive")
	}
	if cur.slice == 0 {
		if err := v.checkStep(p, c, st); err != nil {
			return false, false, where("%v", err)
		}
	}
	if st.Prim == SendRecv || p.P2P != nil && st.Prim != Copy {
		return v.halves(r, c, st, cur, where)
	}
	local := st.Prim == Copy || st.Prim == ReduceCopy
	off, cnt := st.Slice(cur.slice)
	if local {
		off, cnt = 0, st.Count
	}
	var recvKey, sendKey connKey
	if st.Prim.Recvs() {
		recvKey = connKey{int(st.RecvPeer), r, c}
		if len(v.queue(recvKey).units) == 0 {
			return false, false, nil
		}
	}
	if st.Prim.Sends() {
		sendKey = connKey{r, int(st.SendPeer), c}
		if !v.queue(sendKey).room(v.queue(sendKey).sent, int64(p.SlotsPerSlice)) {
			return false, false, nil
		}
	}
	var data []token
	if st.Prim.Recvs() {
		data = v.queue(recvKey).pop().data
		if int64(len(data)) != cnt {
			return false, false, where("received %d elements from rank %d, expected %d", len(data), st.RecvPeer, cnt)
		}
	}
	var in []token
	if st.Prim.ReadsInput() {
		var err error
		if in, err = v.read(r, st, st.InOff+off, cnt); err != nil {
			return false, false, where("%v", err)
		}
	}
	switch st.Prim {
	case Send, Copy, ReduceCopy, CopySend:
		data = append([]token(nil), in...)
	case RecvReduceSend, RecvReduceCopy, RecvReduceCopySend:
		for i := range data {
			a, b := data[i], in[i]
			if a.idx != b.idx {
				return false, false, where("combines element %d with element %d", a.idx, b.idx)
			}
			if a.mask&b.mask != 0 {
				return false, false, where("element %d reduced twice from ranks %#x", a.idx, a.mask&b.mask)
			}
			data[i] = token{mask: a.mask | b.mask, idx: a.idx}
		}
	}
	if st.Prim.WritesOutput() {
		if err := v.writePieces(r, st, st.OutOff+off, data); err != nil {
			return false, false, where("%v", err)
		}
	}
	if st.Prim.Sends() {
		q := v.queue(sendKey)
		q.push(unit{data: append([]token(nil), data...), at: q.sent, slots: int64(p.SlotsPerSlice)})
	}
	cur.slice++
	if local || cur.slice == p.SlicesPerStep {
		cur.step, cur.slice = cur.step+1, 0
	}
	return true, cur.step >= len(steps), nil
}

// read returns n elements of rank r's input from element lo, in the
// pieces of step st (Step.Pieces).
func (v *verifier) read(r int, st *Step, lo, n int64) ([]token, error) {
	in := v.in[r]
	var data []token
	for off, m := range st.Pieces(n) {
		if a, b := lo+off, lo+off+m; a < 0 || b > int64(len(in)) {
			return nil, fmt.Errorf("reads input [%d, %d) outside [0, %d)", a, b, len(in))
		}
		data = append(data, in[lo+off:lo+off+m]...)
	}
	return data, nil
}

// writePieces stores data from element lo of rank r's output in the
// pieces of step st (Step.Pieces), each element once.
func (v *verifier) writePieces(r int, st *Step, lo int64, data []token) error {
	done := int64(0)
	for off, m := range st.Pieces(int64(len(data))) {
		if err := v.write(r, lo+off, data[done:done+m]); err != nil {
			return err
		}
		done += m
	}
	return nil
}

// write stores data at element lo of rank r's output, each element once.
func (v *verifier) write(r int, lo int64, data []token) error {
	out := v.out[r]
	if hi := lo + int64(len(data)); lo < 0 || hi > int64(len(out)) {
		return fmt.Errorf("writes output [%d, %d) outside [0, %d)", lo, hi, len(out))
	}
	for i, t := range data {
		if out[lo+int64(i)].mask != 0 {
			return fmt.Errorf("output element %d written twice", lo+int64(i))
		}
		out[lo+int64(i)] = t
	}
	return nil
}

// checkTiles checks a step's tiles (Step.Tile, Step.Stride): only on a
// copy or a direct send half of a plan with a stripe, whole alignment
// units, at least two tiles apart, a whole number of tiles apart.
func checkTiles(p *Plan, st *Step) error {
	if st.Tile == 0 && st.Stride == 0 {
		return nil
	}
	a := p.AlignmentElems
	switch {
	case p.P2P == nil || p.P2P.Stripe == 0:
		return fmt.Errorf("tiles of %d elements in a plan without a stripe", st.Tile)
	case st.Prim != Copy && (!st.Prim.Sends() || !p.Direct(st.SendLL)):
		return fmt.Errorf("tiles of %d elements on a %v step without a direct send half", st.Tile, st.Prim)
	case st.Tile <= 0 || st.Tile%a != 0 || st.Stride < 2*st.Tile || st.Stride%st.Tile != 0:
		return fmt.Errorf("tiles of %d elements %d apart: want a positive multiple of %d elements, a whole number of tiles apart, at least two", st.Tile, st.Stride, a)
	}
	return nil
}

// checkStep checks what a step of channel c promises before any of it
// runs: peers (any other rank: the host executor connects any two),
// slice sizes and alignment.
func (v *verifier) checkStep(p *Plan, c int, st *Step) error {
	if st.Prim.Recvs() != (st.RecvPeer >= 0) || st.Prim.Sends() != (st.SendPeer >= 0) {
		return fmt.Errorf("peers recv %d send %d do not match the primitive", st.RecvPeer, st.SendPeer)
	}
	me := int32(p.Spec.Rank)
	if st.RecvPeer >= int32(v.n) || st.SendPeer >= int32(v.n) || st.RecvPeer == me || st.SendPeer == me {
		return fmt.Errorf("peers recv %d send %d: not another rank of %d", st.RecvPeer, st.SendPeer, v.n)
	}
	if st.Count < 0 || st.RecvCount < 0 {
		return fmt.Errorf("negative count %d or receive count %d", st.Count, st.RecvCount)
	}
	if st.RecvCount != 0 && st.Prim != SendRecv {
		return fmt.Errorf("receive count %d on a %v (SendRecv's only)", st.RecvCount, st.Prim)
	}
	if err := checkTiles(p, st); err != nil {
		return err
	}
	if st.Prim == Copy || st.Prim == ReduceCopy {
		return nil
	}
	a := p.AlignmentElems
	if st.SliceLen <= 0 || st.SliceLen > p.SliceCapElems || st.SliceLen%a != 0 {
		return fmt.Errorf("slice length %d not a positive multiple of %d up to %d", st.SliceLen, a, p.SliceCapElems)
	}
	sent, recvd := st.Count, st.RecvCount
	if st.Prim == Recv {
		sent, recvd = 0, st.Count
	}
	for _, h := range [...]struct {
		n  int64
		ll bool
	}{{sent, st.SendLL}, {recvd, st.RecvLL}} {
		switch {
		case h.ll && (p.P2P == nil || p.P2P.LLMax == 0):
			return fmt.Errorf("a half by LL in a plan that sends nothing by LL")
		case h.ll && h.n > p.P2P.llChunk():
			return fmt.Errorf("an LL half of %d elements overflows its slot of %d", h.n, p.P2P.llChunk())
		case !h.ll && p.Direct(false):
			if h.n > P2PDirectMaxChunk/int64(p.Spec.EltSize) {
				return fmt.Errorf("a direct half of %d elements exceeds a direct chunk's %d bytes", h.n, P2PDirectMaxChunk)
			}
		case !h.ll && st.SliceLen*int64(p.SlicesPerStep) < h.n:
			return fmt.Errorf("%d slices of %d elements cannot carry %d", p.SlicesPerStep, st.SliceLen, h.n)
		}
	}
	if int64(p.SlotPayload*p.SlotsPerSlice) < st.SliceLen*int64(p.Spec.WireSize()) {
		return fmt.Errorf("slice of %d elements overflows its %d-byte slots", st.SliceLen, p.SlotPayload*p.SlotsPerSlice)
	}
	if st.Count == 0 && st.RecvCount == 0 || p.Spec.Coll.P2P() {
		return nil // an empty step's offsets are never dereferenced; a message's are its own
	}
	seg := p.Spec.Count
	inSeg := p.Spec.Coll == ReduceScatter
	outSeg := p.Spec.Coll == AllGather
	if st.Prim.ReadsInput() && (st.Prim != SendRecv || st.Count > 0) && segOffset(st.InOff, seg, inSeg)%a != 0 {
		return fmt.Errorf("input offset %d not aligned to %d elements in its segment", st.InOff, a)
	}
	if st.Prim.WritesOutput() && (st.Prim != SendRecv || st.RecvCount > 0) && segOffset(st.OutOff, seg, outSeg)%a != 0 {
		return fmt.Errorf("output offset %d not aligned to %d elements in its segment", st.OutOff, a)
	}
	return nil
}

func segOffset(off, seg int64, segmented bool) int64 {
	if segmented && seg > 0 {
		return off % seg
	}
	return off
}

func (v *verifier) checkOutputs() error {
	s := v.spec
	if v.want != nil {
		for r := range v.n {
			for i, t := range v.out[r] {
				if w := v.want[r][i]; t != w {
					return fmt.Errorf("verify: %v rank %d output element %d holds %s, want %s", s.Coll, r, i, t, w)
				}
			}
		}
		return nil
	}
	all := uint64(1)<<v.n - 1
	if v.n == 64 {
		all = ^uint64(0)
	}
	for r := range v.n {
		out := v.out[r]
		for i, t := range out {
			want := token{mask: all, idx: int64(i)}
			switch s.Coll {
			case ReduceScatter:
				want.idx = int64(r)*s.Count + int64(i)
			case AllGather:
				u := int64(i) / s.Count
				want = token{mask: 1 << u, idx: int64(i) - u*s.Count}
			case Broadcast:
				want.mask = 1 << s.Root
			case Reduce:
				if r != s.Root {
					want = token{}
				}
			}
			if t != want {
				return fmt.Errorf("verify: %v rank %d output element %d holds %s, want %s", s.Coll, r, i, t, want)
			}
		}
	}
	return nil
}

func (t token) String() string {
	if t.mask == 0 {
		return "nothing"
	}
	return fmt.Sprintf("element %d from %d ranks (%#x)", t.idx, bits.OnesCount64(t.mask), t.mask)
}
