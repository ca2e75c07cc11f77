// Package trace records what ringo's collectives do, step by step, as a
// Chrome trace (the JSON Perfetto and chrome://tracing open): each rank is
// a process of the trace, its collectives one track, each channel's
// primitive calls another. RINGO_TRACE=file.json turns it on; the file is
// written when a communicator closes (and rewritten by each later close in
// the process). Ranks in separate processes write file-rankN.json each.
//
// Recording costs two clock reads and an append per step, and only when
// tracing is on; a Recorder is safe for concurrent use.
package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/env"
)

// Event is one complete event ("ph": "X") of the trace.
type Event struct {
	Name string    `json:"name"`
	Cat  string    `json:"cat"`
	Ph   string    `json:"ph"`
	Ts   float64   `json:"ts"`  // µs since the Unix epoch, so that the files of several processes line up
	Dur  float64   `json:"dur"` // µs
	Pid  int       `json:"pid"` // the rank
	Tid  int       `json:"tid"` // 0: the rank's collectives; c+1: channel c
	Args EventArgs `json:"args"`
}

// EventArgs are an event's details.
type EventArgs struct {
	Seq   uint64 `json:"seq"`            // the collective's sequence number
	Step  int    `json:"step"`           // the step's index in its channel's program (-1: a collective)
	Recv  int    `json:"recv"`           // the rank the step received from (-1: none)
	Send  int    `json:"send"`           // the rank the step sent to (-1: none)
	Count int64  `json:"count"`          // elements
	What  string `json:"what,omitempty"` // datatype and op, or the error
}

// Recorder collects events and writes them as one trace file.
type Recorder struct {
	path string

	mu     sync.Mutex
	events []Event
	names  map[[2]int]string // (pid, tid) → track name
}

// New returns a recorder that writes to path.
func New(path string) *Recorder {
	return &Recorder{path: path, names: map[[2]int]string{}}
}

var envTrace = env.Var{Name: "TRACE"}

// Check reports an error naming RINGO_TRACE when its files cannot be
// written: a communicator's init calls it, so that a bad path fails there
// rather than when the trace is written at Close.
func Check() error {
	v, name, ok := envTrace.Lookup()
	if !ok {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(strings.TrimSpace(v)), ".ringo-trace-check-*")
	if err != nil {
		return env.Invalid(name, v, "cannot write the trace there: %v", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// FromEnv returns the recorder RINGO_TRACE asks for, or nil: one per file
// and process, shared by the communicators that write to it. rank ≥ 0
// names a rank of a communicator spread over processes: its file gets
// -rankN before the extension.
func FromEnv(rank int) *Recorder {
	p, _, _ := envTrace.Lookup()
	if p = strings.TrimSpace(p); p == "" {
		return nil
	}
	if rank >= 0 {
		ext := filepath.Ext(p)
		p = strings.TrimSuffix(p, ext) + fmt.Sprintf("-rank%d", rank) + ext
	}
	recordersMu.Lock()
	defer recordersMu.Unlock()
	if r, ok := recorders[p]; ok {
		return r
	}
	r := New(p)
	recorders[p] = r
	return r
}

var (
	recordersMu sync.Mutex
	recorders   = map[string]*Recorder{}
)

// Now returns the trace clock: µs since the Unix epoch.
func (r *Recorder) Now() float64 { return float64(time.Now().UnixNano()) / 1e3 }

// Add records an event from start (a Now reading) to now.
func (r *Recorder) Add(name, cat string, start float64, pid, tid int, args EventArgs) {
	end := r.Now()
	r.mu.Lock()
	r.events = append(r.events, Event{Name: name, Cat: cat, Ph: "X", Ts: start, Dur: end - start, Pid: pid, Tid: tid, Args: args})
	r.mu.Unlock()
}

// Event records e as it is (its clock must be the trace's).
func (r *Recorder) Event(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Name names a track (tid 0: "collectives", else "channel tid-1") the
// first time it is seen.
func (r *Recorder) Name(pid, tid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]int{pid, tid}
	if _, ok := r.names[k]; ok {
		return
	}
	r.names[k] = "collectives"
	if tid > 0 {
		r.names[k] = fmt.Sprintf("channel %d", tid-1)
	}
}

// Write writes every event so far to the recorder's file.
func (r *Recorder) Write() error {
	r.mu.Lock()
	type meta struct {
		Name string            `json:"name"`
		Ph   string            `json:"ph"`
		Pid  int               `json:"pid"`
		Tid  int               `json:"tid"`
		Args map[string]string `json:"args"`
	}
	out := struct {
		TraceEvents []any  `json:"traceEvents"`
		Unit        string `json:"displayTimeUnit"`
	}{Unit: "ns"}
	pids := map[int]bool{}
	for k, name := range r.names {
		out.TraceEvents = append(out.TraceEvents, meta{"thread_name", "M", k[0], k[1], map[string]string{"name": name}})
		if !pids[k[0]] {
			pids[k[0]] = true
			out.TraceEvents = append(out.TraceEvents, meta{"process_name", "M", k[0], 0, map[string]string{"name": fmt.Sprintf("rank %d", k[0])}})
		}
	}
	for _, e := range r.events {
		out.TraceEvents = append(out.TraceEvents, e)
	}
	r.mu.Unlock()
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(r.path, b, 0o644); err != nil {
		return fmt.Errorf("RINGO_TRACE: %w", err)
	}
	return nil
}
