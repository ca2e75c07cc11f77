package kernels

import (
	"fmt"
	"maps"
	"slices"
)

// Entry says what one entry of a rank's connection table holds: on channel
// Ch, the receive end of the connection from rank Recv and the send end of
// the connection to rank Send (-1: none).
type Entry struct{ Ch, Recv, Send int }

// Table is a rank's connection table as its plans see it: which entry
// holds the end a step uses. Entries are only appended, so a plan encoded
// against the table stays valid as the table grows.
type Table struct {
	Entries    []Entry
	recv, send map[end]int
}

// end is one end of a connection: its channel and the peer at the far end.
type end struct{ ch, peer int }

// Add appends e. An end the table already holds is an error: each
// connection has one entry at each of its ends.
func (t *Table) Add(e Entry) error {
	if t.recv == nil {
		t.recv, t.send = map[end]int{}, map[end]int{}
	}
	r, s := end{e.Ch, e.Recv}, end{e.Ch, e.Send}
	if _, ok := t.recv[r]; ok && e.Recv >= 0 {
		return fmt.Errorf("kernels: the table already receives from rank %d on channel %d", e.Recv, e.Ch)
	}
	if _, ok := t.send[s]; ok && e.Send >= 0 {
		return fmt.Errorf("kernels: the table already sends to rank %d on channel %d", e.Send, e.Ch)
	}
	i := len(t.Entries)
	if i > 0xffff {
		return fmt.Errorf("kernels: a table of more than %d entries", 0xffff+1)
	}
	if e.Recv >= 0 {
		t.recv[r] = i
	}
	if e.Send >= 0 {
		t.send[s] = i
	}
	t.Entries = append(t.Entries, e)
	return nil
}

// Recv returns the entry holding the receive end of the connection from
// peer on channel ch.
func (t *Table) Recv(ch, peer int) (int, bool) {
	i, ok := t.recv[end{ch, peer}]
	return i, ok
}

// Send returns the entry holding the send end of the connection to peer on
// channel ch.
func (t *Table) Send(ch, peer int) (int, bool) {
	i, ok := t.send[end{ch, peer}]
	return i, ok
}

// Clone returns a copy of t that later Adds to either do not change.
func (t *Table) Clone() *Table {
	return &Table{Entries: slices.Clone(t.Entries), recv: maps.Clone(t.recv), send: maps.Clone(t.send)}
}
