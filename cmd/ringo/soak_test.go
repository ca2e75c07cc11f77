package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSoak runs "ringo soak" with ranks as processes over shared memory and
// over sockets, and as goroutines: reports after the warm-up, every -every and at the end,
// and a verdict of nothing wrong and nothing grown; a collective that
// times out stops every rank with an error naming it, and bad flags are
// refused.
func TestSoak(t *testing.T) {
	bin := buildRingo(t)
	for tr, how := range map[string]string{"shm": "processes, shared memory", "socket": "processes, sockets", "loopback": "goroutines"} {
		out, err := exec.Command(bin, "soak", "-transport", tr, "-ranks", "3", "-n", "400", "-every", "200", "-warmup", "100", "-max", "8K").CombinedOutput()
		s := string(out)
		if err != nil || !strings.Contains(s, "# soak OK") || !strings.Contains(s, "wrong:         0 elements in 400 collectives OK") {
			t.Fatalf("%s: %v\n%s", tr, err, s)
		}
		if !strings.Contains(s, "3 ranks ("+how) {
			t.Errorf("%s: the header does not say the ranks run as %s:\n%s", tr, how, s)
		}
		rows := 0
		for _, line := range strings.Split(s, "\n") {
			if line != "" && line[0] != '#' {
				rows++
			}
		}
		if rows != 3 { // after 100, 200 and 400 collectives
			t.Errorf("%s: %d reports, want 3:\n%s", tr, rows, s)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"soak", "-ranks", "3", "-timeout", "1us"}, "context deadline exceeded"},
		{[]string{"soak", "-transport", "loopback", "-ranks", "2", "-timeout", "1us"}, "context deadline exceeded"},
		{[]string{"soak", "-transport", "carrier-pigeon"}, "-transport"},
		{[]string{"soak", "-max", "1x"}, "-max"},
		{[]string{"soak", "-n", "10", "-warmup", "20"}, "warm-up"},
		{[]string{"soak", "-gpus", "0,x"}, "-gpus"},
		{[]string{"soak", "-gpus", "0,1", "-n", "10", "-warmup", "5"}, "CUDA is not available"}, // this test's build has no cuda tag
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v, want an error containing %q:\n%s", c.args, err, c.want, out)
		}
	}
}
