package main

import "sync"

// spares is a few *T kept for reuse, so that what a call needs from call to
// call (a group's state, a run's scratch) is not allocated each time. Unlike
// sync.Pool it keeps what it is given (the allocation tests hold under the
// race detector, whose Pool drops items at random). Safe for concurrent use.
type spares[T any] struct {
	mu    sync.Mutex
	items []*T
}

// maxSpares bounds what a spares keeps: more threads than that calling at
// once allocate.
const maxSpares = 16

// get returns a kept *T, or a new one.
func (s *spares[T]) get() *T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.items); n > 0 {
		x := s.items[n-1]
		s.items[n-1] = nil
		s.items = s.items[:n-1]
		return x
	}
	return new(T)
}

// put keeps x, which its caller no longer uses, unless enough are kept.
func (s *spares[T]) put(x *T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.items) < maxSpares {
		s.items = append(s.items, x)
	}
}
