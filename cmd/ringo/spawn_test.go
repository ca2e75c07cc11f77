package main

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envHelper makes the test binary a stand-in rank process (TestHelperRank).
const envHelper = "RINGO_TEST_HELPER_RANK"

// TestHelperRank is not a test: run by helperRank, it fails at once
// ("fail") or hangs until killed ("hang").
func TestHelperRank(t *testing.T) {
	switch os.Getenv(envHelper) {
	case "fail":
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
		os.Exit(0)
	}
}

// helperRank starts a stand-in rank process doing what.
func helperRank(t *testing.T, what string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRank$")
	cmd.Env = append(os.Environ(), envHelper+"="+what)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestWaitRanksCollectsKilled: when one rank fails and another hangs,
// waitRanks kills the hung one after the grace and collects its exit too,
// reporting both (the kill once used up a pass of the loop, and the killed
// rank's exit was never collected).
func TestWaitRanksCollectsKilled(t *testing.T) {
	procs := []*exec.Cmd{helperRank(t, "fail"), helperRank(t, "hang")}
	err := waitRanks(procs, 100*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 of 2 ranks failed")
	assert.Contains(t, err.Error(), "rank 0: exit status 3")
	assert.Contains(t, err.Error(), "rank 1: signal: killed")
	for r, p := range procs {
		assert.NotNil(t, p.ProcessState, "rank %d's exit was not collected", r)
	}
}
