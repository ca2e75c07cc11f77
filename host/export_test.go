package host

// setSteps starts every connection counter at v, so tests can run the
// protocols across flag wrap-around and the LL cleaning window. It must be
// called before the executor's first job.
func (e *Executor) setSteps(v uint64) { e.first = v }
