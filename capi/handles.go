package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// handleBlock is the C memory an ncclComm_t points to.
type handleBlock struct {
	magic  uint32 // handleLive, or handleDead once destroyed
	slot   uint32 // index into handleTable's entries
	serial uint64 // creation number, to tell handles apart in a debugger
}

const (
	handleLive = 0x52494e47 // "RING"
	handleDead = 0xdeadc0de
)

// handleTable maps ncclComm_t handles to entries. Lookups take no lock:
// the slice of entries is replaced, never modified, under mu. Blocks of
// destroyed handles are marked dead and never freed, so a stale handle is
// recognised without touching freed memory.
type handleTable struct {
	entries atomic.Pointer[[]*commEntry] // by slot; nil: free

	mu     sync.Mutex // guards changes to entries, free and serial
	free   []uint32
	serial uint64
}

// add gives e a new handle.
func (t *handleTable) add(e *commEntry) unsafe.Pointer {
	p := C.malloc(C.size_t(unsafe.Sizeof(handleBlock{}))) // cgo's malloc never returns nil
	t.mu.Lock()
	defer t.mu.Unlock()
	var old []*commEntry
	if s := t.entries.Load(); s != nil {
		old = *s
	}
	next := cloneEntries(old)
	var slot uint32
	if n := len(t.free); n > 0 {
		slot, t.free = t.free[n-1], t.free[:n-1]
	} else {
		slot = uint32(len(next))
		next = append(next, nil)
	}
	next[slot] = e
	t.serial++
	*(*handleBlock)(p) = handleBlock{magic: handleLive, slot: slot, serial: t.serial}
	e.handle = p
	t.entries.Store(&next)
	return p
}

// cloneEntries copies s with room for one more entry.
func cloneEntries(s []*commEntry) []*commEntry {
	out := make([]*commEntry, len(s), len(s)+1)
	copy(out, s)
	return out
}

// resolve returns the entry of live handle p. Called by lookup without a
// lock and by remove with t.mu held.
func (t *handleTable) resolve(fn string, p unsafe.Pointer) (*commEntry, *handleBlock, error) {
	if p == nil {
		return nil, nil, invalidArg("%s: comm is NULL", fn)
	}
	b := (*handleBlock)(p)
	switch atomic.LoadUint32(&b.magic) {
	case handleLive:
	case handleDead:
		return nil, nil, invalidArg("%s: comm %p was destroyed", fn, p)
	default:
		return nil, nil, invalidArg("%s: comm %p is not a communicator of this library", fn, p)
	}
	slot := atomic.LoadUint32(&b.slot)
	var e *commEntry
	if s := t.entries.Load(); s != nil && int(slot) < len(*s) {
		e = (*s)[slot]
	}
	if e == nil || e.handle != p {
		return nil, nil, invalidArg("%s: comm %p was destroyed", fn, p)
	}
	return e, b, nil
}

// lookup returns the entry of live handle p, or ncclInvalidArgument naming
// fn when p is NULL, destroyed or unknown.
func (t *handleTable) lookup(fn string, p unsafe.Pointer) (*commEntry, error) {
	e, _, err := t.resolve(fn, p)
	return e, err
}

// remove retires handle p and returns its entry. Its block stays allocated,
// marked dead.
func (t *handleTable) remove(fn string, p unsafe.Pointer) (*commEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, b, err := t.resolve(fn, p)
	if err != nil {
		return nil, err
	}
	atomic.StoreUint32(&b.magic, handleDead)
	next := cloneEntries(*t.entries.Load())
	next[b.slot] = nil
	t.free = append(t.free, b.slot)
	t.entries.Store(&next)
	return e, nil
}

// live returns the number of live handles, for tests.
func (t *handleTable) live() int {
	n := 0
	if s := t.entries.Load(); s != nil {
		for _, e := range *s {
			if e != nil {
				n++
			}
		}
	}
	return n
}

// regTable holds ncclCommRegister's and ncclCommWindowRegister's handles:
// small C blocks, so that a caller never holds a Go pointer. A
// registration's holds the registration; a window's the window (nil until
// a group's end registers it).
type regTable struct {
	mu   sync.Mutex
	regs map[unsafe.Pointer]*regEntry
}

// regEntry is what a handle stands for: a registration, or a window, of
// a communicator.
type regEntry struct {
	e      *commEntry
	window bool
	win    commWindow // the window, once registered
}

func (t *regTable) add(e *commEntry, window bool) unsafe.Pointer {
	p := C.malloc(16)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.regs == nil {
		t.regs = map[unsafe.Pointer]*regEntry{}
	}
	t.regs[p] = &regEntry{e: e, window: window}
	return p
}

// set gives window handle p its window.
func (t *regTable) set(p unsafe.Pointer, w commWindow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.regs[p]; r != nil {
		r.win = w
	}
}

// remove frees handle p, which e must own, of the kind window says, and
// returns what it stood for.
func (t *regTable) remove(fn string, e *commEntry, p unsafe.Pointer, window bool) (*regEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.regs[p]
	switch {
	case !ok:
		return nil, invalidArg("%s: handle %p is not a registration of this library (or was deregistered)", fn, p)
	case r.e != e:
		return nil, invalidArg("%s: handle %p was registered with another communicator", fn, p)
	case r.window != window && window:
		return nil, invalidArg("%s: handle %p is an ncclCommRegister registration, not a window", fn, p)
	case r.window != window:
		return nil, invalidArg("%s: handle %p is a window (ncclCommWindowDeregister), not an ncclCommRegister registration", fn, p)
	}
	delete(t.regs, p)
	C.free(p)
	return r, nil
}

// drop frees every handle e owns (when e is destroyed: its windows go with
// its communicator).
func (t *regTable) drop(e *commEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, r := range t.regs {
		if r.e == e {
			delete(t.regs, p)
			C.free(p)
		}
	}
}
