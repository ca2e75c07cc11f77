package host

// setSteps starts every connection counter at v, so tests can run the
// protocols across flag wrap-around and the LL cleaning window.
func (e *Executor) setSteps(v uint64) {
	for i := range e.chans {
		ch := &e.chans[i]
		ch.sendStep, ch.recvStep = v, v
		if ch.Recv != nil {
			ch.Recv.Head().Store(v)
			ch.Recv.Tail().Store(v)
		}
	}
}
