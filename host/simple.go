package host

import (
	"github.com/ringo-ccl/ringo/internal/mem"
	"github.com/ringo-ccl/ringo/reduce"
	"github.com/ringo-ccl/ringo/ring"
)

// simpleStep runs one primitive call with the Simple protocol: for each
// slice, wait until the receive FIFO holds it and the send FIFO has room,
// move the data straight between FIFO slots and user buffers, then publish
// head (consumed) and tail (produced). Empty slices are posted too, so both
// ends count the same FIFO steps.
func (e *Executor) simpleStep(_ *channel, c int, st *ring.Step) (string, error) {
	p := e.job.Plan
	w := e.job.Wait
	sps := p.SlotsPerSlice
	wire := int64(p.Spec.WireSize())
	if st.Prim == ring.Copy || st.Prim == ring.ReduceCopy {
		apply(st.Prim, e.job.Func, false, nil, nil, e.in(st, 0, st.Count), e.out(st, 0, st.Count))
		return "", nil
	}
	recv, send, what, err := e.ends(c, st, uint64(p.SlotsPerStep()))
	if err != nil {
		return what, err
	}
	if st.Prim == ring.SendRecv {
		return e.simpleSendRecv(st, recv, send)
	}
	for k := range p.SlicesPerStep {
		off, n := st.Slice(k)
		nb := n * wire // bytes in the FIFO
		var src, dst, in, out []byte
		if recv != nil {
			if err := recv.conn.WaitData(recv.step+uint64(sps), w); err != nil {
				return waitData, err
			}
			src = recv.conn.SimpleSlots(recv.step, sps)[:nb]
		}
		if send != nil {
			if err := send.conn.WaitCredit(send.step, sps, w); err != nil {
				return waitCredit, err
			}
			dst = send.conn.SimpleSlots(send.step, sps)[:nb]
		}
		if st.Prim.ReadsInput() {
			in = e.in(st, off, n)
		}
		if st.Prim.WritesOutput() {
			out = e.out(st, off, n)
		}
		if e.job.Wire != nil {
			applyWire(st.Prim, e.job.Wire, src, dst, in, out)
		} else {
			apply(st.Prim, e.job.Func, e.stream, src, dst, in, out)
		}
		if recv != nil {
			recv.step += uint64(sps)
			recv.conn.PostHead(recv.step)
		}
		if send != nil {
			send.conn.PostSimple(send.step, send.step+uint64(sps), int(nb))
			send.step += uint64(sps)
		}
	}
	return "", nil
}

// simpleSendRecv runs a SendRecv step with the Simple protocol: for each
// slice k, its send half (credit, copy from the input, post), then its
// receive half (data, copy to the output, head), so the send never waits
// for the receive.
func (e *Executor) simpleSendRecv(st *ring.Step, recv, send *end) (string, error) {
	p := e.job.Plan
	w := e.job.Wait
	sps := p.SlotsPerSlice
	elt := int64(p.Spec.EltSize)
	for k := range p.SlicesPerStep {
		off, n := st.Slice(k)
		if err := send.conn.WaitCredit(send.step, sps, w); err != nil {
			return waitCredit, err
		}
		copy(send.conn.SimpleSlots(send.step, sps)[:n*elt], e.in(st, off, n))
		send.conn.PostSimple(send.step, send.step+uint64(sps), int(n*elt))
		send.step += uint64(sps)

		off, n = st.RecvSlice(k)
		if err := recv.conn.WaitData(recv.step+uint64(sps), w); err != nil {
			return waitData, err
		}
		copy(e.out(st, off, n), recv.conn.SimpleSlots(recv.step, sps)[:n*elt])
		recv.step += uint64(sps)
		recv.conn.PostHead(recv.step)
	}
	return "", nil
}

// apply moves one slice's data for prim. recv is the received data, send the
// space to produce into, in and out the user buffers' ranges; each is nil
// when the primitive does not use it. stream writes the copies into send
// with non-temporal stores (see stores).
func apply(prim ring.Prim, f *reduce.Func, stream bool, recv, send, in, out []byte) {
	switch prim {
	case ring.Send:
		load(f, stream, send, in)
	case ring.Recv:
		copy(out, recv)
	case ring.RecvReduceSend:
		f.Reduce(send, recv, in)
	case ring.RecvReduceCopy:
		f.ReduceFinal(out, recv, in)
	case ring.RecvReduceCopySend:
		f.ReduceFinal(out, recv, in)
		fill(stream, send, out)
	case ring.RecvCopySend:
		copy(out, recv)
		fill(stream, send, recv)
	case ring.CopySend:
		copyUnlessSame(out, in)
		fill(stream, send, in)
	case ring.Copy:
		copyUnlessSame(out, in)
	case ring.ReduceCopy:
		f.Final(out, in)
	}
}

// load sets send, a FIFO's slots or a board's slot, to f's pre(in), with
// non-temporal stores if stream, else cached ones (see fill).
func load(f *reduce.Func, stream bool, send, in []byte) {
	switch {
	case f.HasPre():
		f.Load(send, in)
	case stream:
		mem.StreamCopy(send, in)
	default:
		mem.CachedCopy(send, in)
	}
}

// fill copies src into send, a FIFO's slots, with non-temporal stores if
// stream, else with cached ones at every length (mem.CachedCopy: Go's copy
// would stream slices of 1 MiB and more, whichever the stores chose).
func fill(stream bool, send, src []byte) {
	if stream {
		mem.StreamCopy(send, src)
	} else {
		mem.CachedCopy(send, src)
	}
}

// applyWire is apply for a precision variant: the FIFOs (recv, send) carry
// w.On(), the buffers w.Buf(); what a rank writes to out is the value as it
// travels (see reduce.Wire).
func applyWire(prim ring.Prim, w *reduce.Wire, recv, send, in, out []byte) {
	switch prim {
	case ring.Send:
		w.Send(send, in)
	case ring.Recv:
		w.Final(out, recv)
	case ring.RecvReduceSend:
		w.Add(send, recv, in)
	case ring.RecvReduceCopy:
		w.AddFinal(out, recv, in)
	case ring.RecvReduceCopySend:
		w.Add(send, recv, in)
		w.Final(out, send)
	case ring.RecvCopySend:
		copy(send, recv)
		w.Final(out, recv)
	case ring.CopySend:
		w.Send(send, in)
		w.Final(out, send)
	}
}

// copyUnlessSame copies unless dst is src (an in-place collective).
func copyUnlessSame(dst, src []byte) {
	if !mem.Same(dst, src) {
		copy(dst, src)
	}
}
