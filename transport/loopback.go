package transport

import (
	"context"
	"fmt"
	"sync"

	"github.com/ringo-ccl/ringo/internal/mem"
)

// Loopback connects the ranks of one process through ordinary memory: both
// ends of a connection share one Conn. It is the transport of in-process
// communicators and the fake every protocol test runs against.
type Loopback struct {
	nranks, nchannels int
	sizes             Sizes

	mu     sync.Mutex // guards conns and closed
	conns  map[[3]int]*Conn
	closed bool
}

var _ Transport = (*Loopback)(nil)

// NewLoopback returns a loopback transport for nranks ranks and nchannels
// channels with FIFOs of the given sizes.
func NewLoopback(nranks, nchannels int, s Sizes) (*Loopback, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if nranks < 1 || nchannels < 1 {
		return nil, fmt.Errorf("loopback: %d ranks and %d channels, need at least 1 of each", nranks, nchannels)
	}
	return &Loopback{nranks: nranks, nchannels: nchannels, sizes: s, conns: map[[3]int]*Conn{}}, nil
}

// Conn returns the connection of channel ch from rank from to rank to,
// allocating it on first use.
func (l *Loopback) Conn(_ context.Context, from, to, ch int) (*Conn, error) {
	if from < 0 || from >= l.nranks || to < 0 || to >= l.nranks || ch < 0 || ch >= l.nchannels {
		return nil, fmt.Errorf("loopback: no connection %d→%d on channel %d (%d ranks, %d channels)", from, to, ch, l.nranks, l.nchannels)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("loopback: closed")
	}
	key := [3]int{from, to, ch}
	if c, ok := l.conns[key]; ok {
		return c, nil
	}
	c, err := NewConn(mem.Alloc(l.sizes.Bytes(), 128), l.sizes)
	if err != nil {
		return nil, err
	}
	l.conns[key] = c
	return c, nil
}

// Close drops every connection.
func (l *Loopback) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.conns = nil
	return nil
}
