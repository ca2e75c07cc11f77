//go:build cuda

package nvtx

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ringo-ccl/ringo/internal/cuda/nvtx/nvtxtest"
)

// TestMain runs the child's body when the parent test asks for it: NVTX
// reads NVTX_INJECTION64_PATH once per process, at its first call.
func TestMain(m *testing.M) {
	if os.Getenv("RINGO_NVTX_CHILD") == "1" {
		child()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child records 100 ranges from 4 goroutines, each ended from a goroutine
// other than the one that started it, on threads of their own.
func child() {
	NameCategory(1, "rank 0")
	msgs := [2]Message{Register("AllReduce float32 sum"), Register("Broadcast int8")}
	var wg sync.WaitGroup
	rs := make(chan Range, 100)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			for i := range 25 {
				rs <- Start(msgs[i%2], 0xff00ff00, 1, uint64(g*1000+i))
			}
		}()
	}
	wg.Wait()
	close(rs)
	for r := range rs {
		End(r)
	}
}

func runChild(t *testing.T, extra ...string) (string, []nvtxtest.Range) {
	t.Helper()
	env, log := nvtxtest.Env(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "RINGO_NVTX_CHILD=1"), append(env, extra...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, err := os.Stat(log); os.IsNotExist(err) {
		return string(out), nil
	}
	ranges, err := nvtxtest.Read(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), ranges
}

// TestRangesReachTheTool: a tool attached through NVTX_INJECTION64_PATH sees
// every range in the domain "ringo", with its message, category name,
// color and payload, and every range ended.
func TestRangesReachTheTool(t *testing.T) {
	_, ranges := runChild(t)
	if len(ranges) != 100 {
		t.Fatalf("the tool saw %d ranges, want 100", len(ranges))
	}
	seen := map[uint64]bool{}
	for _, r := range ranges {
		g, i := r.Payload/1000, r.Payload%1000
		want := [2]string{"AllReduce float32 sum", "Broadcast int8"}[i%2]
		if r.Domain != "ringo" || r.Category != "rank 0" || r.Color != 0xff00ff00 || r.Message != want || g > 3 || i > 24 || !r.Ended {
			t.Errorf("range %+v", r)
		}
		if seen[r.Payload] {
			t.Errorf("payload %d twice", r.Payload)
		}
		seen[r.Payload] = true
	}
}

// TestDisable: NCCL_NVTX_DISABLE=1 records nothing, as in NCCL.
func TestDisable(t *testing.T) {
	for _, v := range []string{"NCCL_NVTX_DISABLE=1", "RINGO_NVTX_DISABLE=1"} {
		t.Run(v, func(t *testing.T) {
			if _, ranges := runChild(t, v); len(ranges) != 0 {
				t.Fatalf("with %s the tool saw %d ranges", v, len(ranges))
			}
		})
	}
}

// TestNoToolNoAllocation: with no tool attached (this process), ranges cost
// no allocation.
func TestNoToolNoAllocation(t *testing.T) {
	m := Register("x")
	if n := testing.AllocsPerRun(100, func() { End(Start(m, 0, 1, 8)) }); n != 0 {
		t.Fatalf("%v allocations per range", n)
	}
}

// TestAttachedNoAllocation: with the tool attached, Start and End do not
// allocate either (a child, since the tool attaches once per process).
func TestAttachedNoAllocation(t *testing.T) {
	if os.Getenv("RINGO_NVTX_ALLOC_CHILD") == "1" {
		m := Register("x")
		n := testing.AllocsPerRun(100, func() { End(Start(m, 0, 1, 8)) })
		fmt.Printf("allocs %v\n", n)
		return
	}
	env, log := nvtxtest.Env(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttachedNoAllocation$", "-test.v")
	cmd.Env = append(append(os.Environ(), "RINGO_NVTX_ALLOC_CHILD=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ranges, err := nvtxtest.Read(log)
	if err != nil || len(ranges) < 100 {
		t.Fatalf("the tool saw %d ranges (%v): not attached", len(ranges), err)
	}
	if !strings.Contains(string(out), "allocs 0\n") {
		t.Fatalf("ranges allocate with a tool attached:\n%s", out)
	}
}
