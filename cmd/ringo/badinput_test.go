package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBadInput: bad input is refused before anything runs, with a message
// that names it and says what would be needed, "ringo: " once per line and
// no Go runtime dump — or, where NCCL falls back, warned about while the
// sweep runs.
func TestBadInput(t *testing.T) {
	bin := buildRingo(t)
	small := []string{"-b", "8", "-e", "64", "-n", "1", "-w", "0"}
	cases := []struct {
		name string
		args []string
		env  []string
		want string // in the output
		ok   bool   // the command succeeds (a warned fallback)
	}{
		{"sizes beyond memory, processes", []string{"bench", "-e", "4096G"}, nil,
			"ringo: -e 4096G: 2 ranks need 16.0 TiB of host memory (8.0 TiB each: a send and a receive buffer of the largest size), and", false},
		{"sizes beyond memory, goroutines", []string{"bench", "-transport", "loopback", "-ranks", "3", "-e", "4096G"}, nil,
			"3 ranks need 24.0 TiB of host memory", false},
		{"unwritable -csv", append([]string{"bench", "-csv", "/nonexistent/dir/out.csv"}, small...), nil,
			"ringo: -csv: open /nonexistent/dir/out.csv: no such file or directory", false},
		{"unwritable tune -o", []string{"tune", "-o", "/nonexistent/dir/model.json"}, nil,
			"ringo: -o: open /nonexistent/dir/model.json: no such file or directory", false},
		{"NCCL_BUFFSIZE=131", append([]string{"bench", "-transport", "loopback"}, small...), []string{"NCCL_BUFFSIZE=131"},
			`ringo: init: NCCL_BUFFSIZE="131": want a multiple of 128 bytes in [128, 1G] (K, M, G suffixes)`, false},
		{"NCCL_BUFFSIZE=1", append([]string{"bench"}, small...), []string{"NCCL_BUFFSIZE=1"},
			`ringo: init rank 0: NCCL_BUFFSIZE="1": want a multiple of 128 bytes`, false},
		{"NCCL_PROTO=Fast", append([]string{"bench", "-transport", "loopback"}, small...), []string{"NCCL_PROTO=Fast"},
			`NCCL_PROTO="Fast": unknown name "Fast" (valid: LL, LL128, Simple)`, false},
		{"NCCL_SOCKET_IFNAME matching nothing", append([]string{"bench"}, small...), []string{"NCCL_SOCKET_IFNAME=no-such-interface"},
			`ringo: bootstrap root: NCCL_SOCKET_IFNAME="no-such-interface": matches no interface that is up with an IP address`, false},
		{"NCCL_NSOCKS_PERTHREAD=-1", append([]string{"bench", "-transport", "socket"}, small...), []string{"NCCL_NSOCKS_PERTHREAD=-1", "NCCL_SOCKET_IFNAME=lo"},
			`NCCL_NSOCKS_PERTHREAD="-1": want an integer in [0, 2147483647]`, false},
		{"NCCL_NSOCKS_PERTHREAD=999", append([]string{"bench", "-transport", "socket"}, small...), []string{"NCCL_NSOCKS_PERTHREAD=999", "NCCL_SOCKET_IFNAME=lo"},
			`ringo WARN NCCL_NSOCKS_PERTHREAD="999": 1 threads × 999 sockets exceed 64 sockets per connection; using 64`, true},
		{"NCCL_MAX_NCHANNELS=0", append([]string{"bench", "-transport", "loopback"}, small...), []string{"NCCL_MAX_NCHANNELS=0"},
			`ringo WARN NCCL_MAX_NCHANNELS="0": outside [1, 64]; using 1`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append(os.Environ(), c.env...)
			out, err := cmd.CombinedOutput()
			s := string(out)
			if c.ok {
				assert.NoError(t, err, s)
			} else {
				assert.Error(t, err, s)
			}
			assert.Contains(t, s, c.want)
			assert.NotContains(t, s, "fatal error")
			assert.NotContains(t, s, "goroutine ")
			for _, line := range strings.Split(s, "\n") {
				assert.LessOrEqual(t, strings.Count(line, "ringo:"), 1, "in %q", line)
				assert.LessOrEqual(t, strings.Count(line, "invalid argument"), 1, "in %q", line)
				if !c.ok && line != "" && line[0] != '#' && !strings.HasPrefix(line, "ringo") {
					t.Errorf("the sweep ran: %q", line)
				}
			}
		})
	}
}
