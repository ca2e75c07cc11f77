package ring

// oneShot: per chunk of the channel range, send this rank's input to the
// peer, then reduce the peer's with it into the output. Both ranks run the
// same program; every chunk fits the FIFO, so the sends never wait for the
// receives they precede.
func (g *gen) oneShot() {
	ch := g.ch
	for done := int64(0); done < ch.Count; done += g.p.ChunkCount {
		cnt := min(g.p.ChunkCount, ch.Count-done)
		off := ch.Offset + done
		g.emit(Send, g.me, off, off, cnt)
		g.emit(RecvReduceCopy, g.me, off, off, cnt)
	}
}
