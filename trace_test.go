package ringo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringo-ccl/ringo"
)

// TestTrace: RINGO_TRACE=file.json writes, when the communicator closes, a
// Chrome trace with every rank's collectives and every channel's steps,
// each step naming its primitive, peers and count.
func TestTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ringo.json")
	t.Setenv("RINGO_TRACE", path)
	comms, err := ringo.NewLocal(3, &ringo.Config{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	noErrors(t, each(comms, func(r int, c *ringo.Comm) error {
		buf := make([]float32, 10000)
		if err := ringo.AllReduce(bg, c, buf, buf, ringo.OpSum); err != nil {
			return err
		}
		return ringo.Broadcast(bg, c, buf, buf, 1)
	}))
	doc := closeAndReadTrace(t, comms, path)
	colls, steps := map[int]int{}, map[[2]int]int{}
	for _, e := range doc {
		switch e.Cat {
		case "collective":
			colls[e.Pid]++
		case "step":
			steps[[2]int{e.Pid, e.Tid}]++
			if e.Args.Seq < 1 || e.Args.Seq > 2 || e.Dur < 0 || (e.Args.Recv < 0 && e.Args.Send < 0) {
				t.Fatalf("step event %+v", e)
			}
		}
	}
	for r := range 3 {
		if colls[r] != 2 {
			t.Errorf("rank %d: %d collectives traced, want 2", r, colls[r])
		}
		for ch := 1; ch <= 2; ch++ {
			// All-reduce on 3 ranks: 2(n−1)+1 = 5 steps per chunk; broadcast: at least one.
			if steps[[2]int{r, ch}] < 6 {
				t.Errorf("rank %d channel %d: %d steps traced", r, ch-1, steps[[2]int{r, ch}])
			}
		}
	}
}

// traceEvent is what the tests read of a trace event.
type traceEvent struct {
	Name, Cat, Ph string
	Pid, Tid      int
	Ts, Dur       float64
	Args          struct {
		Seq        uint64
		Step       int
		Recv, Send int
		Count      int64
	}
}

// closeAndReadTrace closes comms, which writes the trace, and reads it.
func closeAndReadTrace(t *testing.T, comms []*ringo.Comm, path string) []traceEvent {
	t.Helper()
	for _, c := range comms {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ TraceEvents []traceEvent }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.TraceEvents
}
