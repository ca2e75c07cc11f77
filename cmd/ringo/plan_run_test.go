package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/ring"
	"github.com/ringo-ccl/ringo/ring/ringtest"
)

// TestPlanRun: "ringo plan -run" runs plans on the host executor and
// checks what they compute — the planner's, and a schedule read from a
// file whose steps name every other rank (no ring); as a version-1
// document that schedule is refused before anything runs.
func TestPlanRun(t *testing.T) {
	bin := buildRingo(t)
	for _, args := range [][]string{
		{"plan", "-coll", "allreduce", "-ranks", "4", "-variant", "bidirectional", "-channels", "2", "-b", "64K", "-run"},
		{"plan", "-coll", "broadcast", "-ranks", "3", "-root", "2", "-proto", "LL", "-buffsize", "65536", "-b", "4K", "-run"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
		assert.Contains(t, string(out), ": 0 wrong", "%v", args)
	}

	plans, err := ringtest.DirectAllGather(ring.Spec{Coll: ring.AllGather, Ring: ring.Identity(4), Count: 300, EltSize: 4,
		Channels: 2, Proto: ring.Simple, BuffSize: 8 * 4096})
	require.NoError(t, err)
	d, err := ring.NewSchedule(plans)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "direct.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, d.Write(f))
	require.NoError(t, f.Close())
	out, err := exec.Command(bin, "plan", "-schedule", path, "-run").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "allgather of 300 elements on 4 ranks (Simple, 2 channels, int32): 0 wrong")

	out, err = exec.Command(bin, "plan", "-schedule", path, "-run", "-gpus", "0,0").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "2 GPUs for a schedule of 4 ranks")

	d.Version = 1
	f, err = os.Create(path)
	require.NoError(t, err)
	require.NoError(t, d.Write(f))
	require.NoError(t, f.Close())
	out, err = exec.Command(bin, "plan", "-schedule", path, "-run").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "a version-1 schedule names only ring neighbours")
}
