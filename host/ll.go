package host

import (
	"github.com/ringo-ccl/ringo/ring"
)

// llStep runs one primitive call with the host LL protocol: one FIFO slot
// per call, data read word by word as its flags arrive, results written with
// their flags; credits return through head. The data of the call is staged
// in the channel's scratch only when it must be combined before it moves on.
func (e *Executor) llStep(ch *channel, c int, st *ring.Step) (string, error) {
	w := e.job.Wait
	f := e.job.Func
	n := st.Count
	if st.Prim == ring.SendRecv {
		return e.llSendRecv(c, st)
	}
	var in, out []byte
	if st.Prim.ReadsInput() {
		in = e.in(st, 0, n)
	}
	if st.Prim.WritesOutput() {
		out = e.out(st, 0, n)
	}
	if st.Prim == ring.Copy || st.Prim == ring.ReduceCopy {
		apply(st.Prim, f, false, nil, nil, in, out)
		return "", nil
	}
	recvEnd, sendEnd, what, err := e.ends(c, st, 0)
	if err != nil {
		return what, err
	}

	nb := n * int64(e.job.Plan.Spec.EltSize)
	var data []byte // what goes out on the send connection
	if st.Prim.Recvs() {
		recv := ch.scratch[:nb]
		if st.Prim == ring.Recv || st.Prim == ring.RecvCopySend {
			recv = out // nothing to combine: land the data in place
		}
		if err := recvEnd.conn.ReadLL(recvEnd.step, recv, w); err != nil {
			return waitData, err
		}
		recvEnd.step++
		recvEnd.conn.PostHead(recvEnd.step)
		switch st.Prim {
		case ring.RecvReduceSend:
			f.Reduce(recv, recv, in)
			data = recv
		case ring.RecvReduceCopy:
			f.ReduceFinal(out, recv, in)
		case ring.RecvReduceCopySend:
			f.ReduceFinal(out, recv, in)
			data = out
		case ring.RecvCopySend:
			data = out
		}
	} else {
		switch st.Prim {
		case ring.Send:
			data = in
			if f.HasPre() {
				data = ch.scratch[:nb]
				f.Load(data, in)
			}
		case ring.CopySend:
			copyUnlessSame(out, in)
			data = in
		}
	}
	if st.Prim.Sends() {
		if err := sendEnd.conn.WaitCredit(sendEnd.step, 1, w); err != nil {
			return waitCredit, err
		}
		sendEnd.conn.WriteLL(sendEnd.step, data)
		sendEnd.step++
	}
	return "", nil
}

// llSendRecv runs a SendRecv step with the LL protocol: its one slice's
// send half, then its receive half.
func (e *Executor) llSendRecv(c int, st *ring.Step) (string, error) {
	w := e.job.Wait
	recvEnd, sendEnd, what, err := e.ends(c, st, 0)
	if err != nil {
		return what, err
	}
	if err := sendEnd.conn.WaitCredit(sendEnd.step, 1, w); err != nil {
		return waitCredit, err
	}
	sendEnd.conn.WriteLL(sendEnd.step, e.in(st, 0, st.Count))
	sendEnd.step++
	if err := recvEnd.conn.ReadLL(recvEnd.step, e.out(st, 0, st.RecvCount), w); err != nil {
		return waitData, err
	}
	recvEnd.step++
	recvEnd.conn.PostHead(recvEnd.step)
	return "", nil
}
