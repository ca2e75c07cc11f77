package ring

import "fmt"

// queue is one connection's FIFO as the device executor keeps it: the
// units in flight, and the sender's and the receiver's counters in slots
// (the receiver's is its credit, the head), and the slots the receiver has
// posted its output's addresses for (direct halves). A send of w slots at
// counter at needs at+w−taken ≤ NSteps, and a direct one at+w ≤ posted.
type queue struct {
	units               []unit
	sent, taken, posted int64
}

// unit is what one send unit put in a FIFO (or, direct, into the
// receiver's output): its elements, the counter it started at, its slots,
// and whether it went by LL under a plan of another protocol, or directly.
type unit struct {
	data       []token
	at, slots  int64
	ll, direct bool
	pieces     Step // a direct unit's Tile and Stride: where its data lands from the address posted
}

func (v *verifier) queue(k connKey) *queue {
	q := v.fifo[k]
	if q == nil {
		q = &queue{}
		v.fifo[k] = q
	}
	return q
}

func (q *queue) room(at, slots int64) bool { return at+slots-q.taken <= NSteps }

func (q *queue) push(u unit) {
	q.units = append(q.units, u)
	q.sent = u.at + u.slots
}

func (q *queue) pop() unit {
	u := q.units[0]
	q.units = q.units[1:]
	q.taken = u.at + u.slots
	return u
}

// halves executes the next unit of step st of rank r on channel c, a step
// whose halves move units of their own protocol (prims_p2p.cuh): a SendRecv
// of any plan, and every step of a point-to-point plan but its copies. A
// half by the plan's protocol is SlicesPerStep units of SlotsPerSlice
// slots, one by LL (SendLL, RecvLL) a single unit of one slot, a direct one
// (Plan.Direct) a single unit of the whole chunk's slots; send unit k
// runs before receive unit k. In a point-to-point plan a Simple unit after
// the first that its chunk leaves empty is skipped at both ends, its slots counted (a sender to a
// proxy posts it, empty, which moves only the tail: not modelled). In a point-to-point plan of Simple, a Simple
// half starts its connection's counter on a multiple of a chunk's slots,
// on both ends (the receiver returning the slots skipped as credit). A
// direct receive half posts its unit as its step starts, and a direct
// send unit waits for it to be posted. A
// receiver that meets a unit started at another counter, or of another
// protocol, is an error naming both.
func (v *verifier) halves(r, c int, st *Step, cur *cursor, where func(string, ...any) error) (ok, done bool, err error) {
	p := v.plans[r]
	// whole: a half that moves in one unit of its whole chunk.
	whole := func(ll bool) bool { return ll || p.Direct(ll) }
	units := func(ll bool) int {
		if whole(ll) {
			return 1
		}
		return p.SlicesPerStep
	}
	slots := func(ll bool) int64 {
		switch {
		case ll:
			return 1
		case p.Direct(ll):
			return int64(p.SlotsPerStep())
		}
		return int64(p.SlotsPerSlice)
	}
	// start returns the counter a half's unit k starts at, from the counter.
	start := func(ctr int64, k int, ll bool) int64 {
		if k == 0 && !ll && p.P2P != nil && p.Spec.Proto == Simple {
			return alignUp(ctr, int64(p.SlotsPerSlice*p.SlicesPerStep))
		}
		return ctr
	}
	ns, nr := 0, 0
	if st.Prim.Sends() {
		ns = units(st.SendLL)
	}
	if st.Prim.Recvs() {
		nr = units(st.RecvLL)
	}
	k := cur.slice
	// empty: unit k is one a point-to-point plan's chunk leaves empty past
	// its first, which both ends skip, its slots counted.
	empty := func(cnt int64) bool { return k > 0 && cnt == 0 && p.P2P != nil }
	if k == 0 && !cur.sent && nr > 0 && p.Direct(st.RecvLL) {
		q := v.queue(connKey{int(st.RecvPeer), r, c})
		if end := start(q.taken, 0, false) + int64(nr)*slots(false); end > q.posted {
			q.posted = end
			return true, false, nil // progress: a sender may go on
		}
	}
	if !cur.sent && k < ns {
		q := v.queue(connKey{r, int(st.SendPeer), c})
		at, w := start(q.sent, k, st.SendLL), slots(st.SendLL)
		off, cnt := st.Slice(k)
		if empty(cnt) {
			q.sent, cur.sent = at+w, true
			return true, false, nil
		}
		if !q.room(at, w) || p.Direct(st.SendLL) && at+w > q.posted {
			return false, false, nil
		}
		if whole(st.SendLL) {
			off, cnt = 0, st.Count
		}
		data, err := v.read(r, st, st.InOff+off, cnt)
		if err != nil {
			return false, false, where("%v", err)
		}
		q.push(unit{data: data, at: at, slots: w, ll: st.SendLL, direct: p.Direct(st.SendLL), pieces: Step{Tile: st.Tile, Stride: st.Stride}})
		cur.sent = true
		return true, false, nil
	}
	if k < nr {
		q := v.queue(connKey{int(st.RecvPeer), r, c})
		at, w := start(q.taken, k, st.RecvLL), slots(st.RecvLL)
		off, cnt := st.RecvSlice(k)
		switch {
		case empty(cnt):
			q.taken = at + w // its slots returned as credit, nothing awaited
		case len(q.units) == 0:
			return false, false, nil
		default:
			if u := q.units[0]; u.ll != st.RecvLL || u.direct != p.Direct(st.RecvLL) || u.at != at || u.slots != w {
				return false, false, where("receives a unit of %d slots at counter %d (LL %v, direct %v) from rank %d, which sent one of %d at %d (LL %v, direct %v)",
					w, at, st.RecvLL, p.Direct(st.RecvLL), st.RecvPeer, u.slots, u.at, u.ll, u.direct)
			}
			u := q.pop()
			data := u.data
			if whole(st.RecvLL) {
				off, cnt = 0, st.Count
				if st.Prim == SendRecv {
					cnt = st.RecvCount
				}
			}
			if int64(len(data)) != cnt {
				return false, false, where("received %d elements from rank %d, expected %d", len(data), st.RecvPeer, cnt)
			}
			if err := v.writePieces(r, &u.pieces, st.OutOff+off, data); err != nil {
				return false, false, where("%v", err)
			}
		}
	}
	cur.sent = false
	cur.slice++
	if cur.slice >= max(ns, nr) {
		cur.step, cur.slice = cur.step+1, 0
	}
	return true, cur.step >= len(p.Channels[c].Steps), nil
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
