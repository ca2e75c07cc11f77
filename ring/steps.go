package ring

// gen emits the steps of one rank on one channel. The loops mirror NCCL's
// runRing functions (src/device/all_reduce.h, reduce_scatter.h,
// all_gather.h, broadcast.h, reduce.h).
type gen struct {
	p  *Plan
	ch *Channel
	r  view // the ring as this channel runs it
	me int  // this rank's position on it
}

func (g *gen) run() {
	s := &g.p.Spec
	n := s.Ring.Size()
	if n == 1 {
		g.oneRank()
		return
	}
	if s.Coll == AllReduce && s.Variant == OneShot {
		g.oneShot()
		return
	}
	switch s.Coll {
	case AllReduce:
		g.allReduce(n)
	case ReduceScatter:
		g.reduceScatter(n)
	case AllGather:
		g.allGather(n)
	case Broadcast:
		g.broadcast(n)
	case Reduce:
		g.reduce(n)
	}
}

// emit appends a step, filling in peers and the slice length.
func (g *gen) emit(prim Prim, chunk int, inOff, outOff, count int64) {
	st := Step{
		Prim:     prim,
		Chunk:    int32(chunk),
		RecvPeer: -1,
		SendPeer: -1,
		InOff:    inOff,
		OutOff:   outOff,
		Count:    count,
	}
	r := g.r
	if prim.Recvs() {
		st.RecvPeer = int32(r.At(g.me, -1))
	}
	if prim.Sends() {
		st.SendPeer = int32(r.At(g.me, 1))
	}
	if prim == Copy || prim == ReduceCopy {
		st.SliceLen = count
	} else {
		st.SliceLen = sliceLen(count, g.p.SlicesPerStep, g.p.SliceCapElems, g.p.AlignmentElems)
	}
	g.ch.Steps = append(g.ch.Steps, st)
}

// oneRank: a communicator of one rank copies input to output, applying the
// op's pre- and post-operations for reductions.
func (g *gen) oneRank() {
	c := g.p.Spec.Coll
	prim := Copy
	if c.Reduces() {
		prim = ReduceCopy
	}
	off := g.ch.Offset
	g.emit(prim, 0, off, off, g.ch.Count)
}

// allReduce: per loop, n chunks of the channel range; chunk c is fully
// reduced at ring position c, then passed around once more.
func (g *gen) allReduce(n int) {
	ch, me := g.ch, g.me
	chunk := g.p.ChunkCount
	loop := int64(n) * chunk
	for done := int64(0); done < ch.Count; done += loop {
		rem := ch.Count - done
		cc := chunk
		if rem < loop {
			cc = alignUp(ceilDiv(rem, int64(n)), g.p.AlignmentElems)
		}
		at := func(j int) (int, int64, int64) {
			c := ((me+j)%n + n) % n
			start := int64(c) * cc
			cnt := max(min(cc, rem-start), 0)
			return c, ch.Offset + done + min(start, rem), cnt
		}
		c, off, cnt := at(-1)
		g.emit(Send, c, off, off, cnt)
		for j := 2; j < n; j++ {
			c, off, cnt = at(-j)
			g.emit(RecvReduceSend, c, off, off, cnt)
		}
		c, off, cnt = at(0)
		g.emit(RecvReduceCopySend, c, off, off, cnt)
		for j := 1; j < n-1; j++ {
			c, off, cnt = at(-j)
			g.emit(RecvCopySend, c, off, off, cnt)
		}
		c, off, cnt = at(1)
		g.emit(Recv, c, off, off, cnt)
	}
}

// reduceScatter: the segment of rank u ends, fully reduced, at rank u; it
// starts at u's ring successor.
func (g *gen) reduceScatter(n int) {
	ch, me, r := g.ch, g.me, g.r
	count := g.p.Spec.Count
	for done := int64(0); done < ch.Count; done += g.p.ChunkCount {
		cnt := min(g.p.ChunkCount, ch.Count-done)
		off := ch.Offset + done
		u := r.At(me, -1)
		g.emit(Send, u, int64(u)*count+off, off, cnt)
		for j := 2; j < n; j++ {
			u = r.At(me, -j)
			g.emit(RecvReduceSend, u, int64(u)*count+off, off, cnt)
		}
		u = r.At(me, 0)
		g.emit(RecvReduceCopy, u, int64(u)*count+off, off, cnt)
	}
}

// allGather: each rank's segment starts at its owner and travels the ring.
func (g *gen) allGather(n int) {
	ch, me, r := g.ch, g.me, g.r
	count := g.p.Spec.Count
	for done := int64(0); done < ch.Count; done += g.p.ChunkCount {
		cnt := min(g.p.ChunkCount, ch.Count-done)
		off := ch.Offset + done
		u := r.At(me, 0)
		g.emit(CopySend, u, off, int64(u)*count+off, cnt)
		for j := 1; j < n-1; j++ {
			u = r.At(me, -j)
			g.emit(RecvCopySend, u, off, int64(u)*count+off, cnt)
		}
		u = r.At(me, 1)
		g.emit(Recv, u, off, int64(u)*count+off, cnt)
	}
}

// broadcast: a chain from the root along the ring.
func (g *gen) broadcast(n int) {
	ch, me, r := g.ch, g.me, g.r
	root := g.p.Spec.Root
	prim := RecvCopySend
	switch {
	case r.At(me, 0) == root:
		prim = CopySend
	case r.At(me, 1) == root:
		prim = Recv
	}
	for done := int64(0); done < ch.Count; done += g.p.ChunkCount {
		cnt := min(g.p.ChunkCount, ch.Count-done)
		off := ch.Offset + done
		g.emit(prim, 0, off, off, cnt)
	}
}

// reduce: a chain along the ring that starts at the root's successor and
// ends at the root.
func (g *gen) reduce(n int) {
	ch, me, r := g.ch, g.me, g.r
	root := g.p.Spec.Root
	prim := RecvReduceSend
	switch {
	case r.At(me, -1) == root:
		prim = Send
	case r.At(me, 0) == root:
		prim = RecvReduceCopy
	}
	for done := int64(0); done < ch.Count; done += g.p.ChunkCount {
		cnt := min(g.p.ChunkCount, ch.Count-done)
		off := ch.Offset + done
		g.emit(prim, 0, off, off, cnt)
	}
}
