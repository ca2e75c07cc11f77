package ring

import "fmt"

// sendRecv executes the next half of slice cur.slice of SendRecv step st of
// rank r on channel c: its send half (room in the FIFO to SendPeer), then
// its receive half (a slice from RecvPeer), as the executors run them.
func (v *verifier) sendRecv(r, c int, st *Step, cur *cursor, where func(string, ...any) error) (ok, done bool, err error) {
	if !cur.sent {
		key := connKey{r, int(st.SendPeer), c}
		if len(v.fifo[key]) >= v.depth {
			return false, false, nil
		}
		off, cnt := st.Slice(cur.slice)
		lo, hi := st.InOff+off, st.InOff+off+cnt
		if lo < 0 || hi > int64(len(v.in[r])) {
			return false, false, where("reads input [%d, %d) outside [0, %d)", lo, hi, len(v.in[r]))
		}
		v.fifo[key] = append(v.fifo[key], append([]token(nil), v.in[r][lo:hi]...))
		cur.sent = true
		return true, false, nil
	}
	key := connKey{int(st.RecvPeer), r, c}
	q := v.fifo[key]
	if len(q) == 0 {
		return false, false, nil
	}
	data := q[0]
	v.fifo[key] = q[1:]
	off, cnt := st.RecvSlice(cur.slice)
	if int64(len(data)) != cnt {
		return false, false, where("received %d elements from rank %d, expected %d", len(data), st.RecvPeer, cnt)
	}
	if err := v.write(r, st.OutOff+off, data); err != nil {
		return false, false, where("%v", err)
	}
	cur.sent = false
	cur.slice++
	if cur.slice == v.plans[r].SlicesPerStep {
		cur.step, cur.slice = cur.step+1, 0
	}
	return true, cur.step >= len(v.plans[r].Channels[c].Steps), nil
}

// p2pOutputs returns what every rank's output must hold after the
// point-to-point plans run: the k-th send from a to b matched with b's k-th
// receive from a (same count), its elements at the receive's place; nothing
// elsewhere. Unmatched messages, different counts and overlapping
// receives are errors naming both ranks.
func p2pOutputs(plans []*Plan) ([][]token, error) {
	n := len(plans)
	want := make([][]token, n)
	for b, p := range plans {
		want[b] = make([]token, p.P2P.OutputLen())
	}
	for b, pb := range plans {
		for a, pa := range plans {
			sends, recvs := byPeer(pa.P2P.Sends, b), byPeer(pb.P2P.Recvs, a)
			if len(sends) != len(recvs) {
				return nil, fmt.Errorf("verify: rank %d sends %d messages to rank %d, which receives %d from it", a, len(sends), b, len(recvs))
			}
			for k := range sends {
				s, r := sends[k], recvs[k]
				if s.Count != r.Count {
					return nil, fmt.Errorf("verify: rank %d's send %d to rank %d has %d elements, rank %d's receive %d from rank %d %d",
						a, k, b, s.Count, b, k, a, r.Count)
				}
				for i := range r.Count {
					w := &want[b][r.Off+i]
					if w.mask != 0 {
						return nil, fmt.Errorf("verify: rank %d receives element %d of its output twice (receive %d from rank %d overlaps another)", b, r.Off+i, k, a)
					}
					*w = token{mask: 1 << a, idx: s.Off + i}
				}
			}
		}
	}
	return want, nil
}
