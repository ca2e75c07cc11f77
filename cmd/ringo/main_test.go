package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildRingo builds the command into a temporary directory.
func buildRingo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ringo")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBenchProcesses runs "ringo bench" with ranks as processes over shared
// memory, every collective, datatype and op: the table must show nothing
// wrong and the command must succeed.
func TestBenchProcesses(t *testing.T) {
	bin := buildRingo(t)
	cmd := exec.Command(bin, "bench", "--ranks", "3", "-coll", "all", "-d", "all", "-o", "all", "-b", "8", "-e", "1K", "-f", "16", "-n", "2", "-w", "1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ringo bench: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "# Out of bounds values : 0 OK") || !strings.Contains(s, "3 ranks (processes, shared memory)") {
		t.Fatalf("unexpected output:\n%s", s)
	}
	// 3 reductions × 12 types × 6 ops + 2 copies × 12 types, 2 sizes each.
	rows := 0
	for _, line := range strings.Split(s, "\n") {
		if line != "" && line[0] != '#' {
			rows++
		}
	}
	if want := (3*12*6 + 2*12) * 2; rows != want {
		t.Fatalf("%d rows, want %d:\n%s", rows, want, s)
	}
}

// TestBenchPointToPointProcesses runs "ringo bench" of sendrecv, alltoall,
// gather and scatter with ranks as processes, every datatype (and every op,
// which gives them one row a size): nothing wrong, each collective's rows
// under its name, sendrecv's and alltoall's in-place halves not run.
func TestBenchPointToPointProcesses(t *testing.T) {
	bin := buildRingo(t)
	out, err := exec.Command(bin, "bench", "--ranks", "3", "-coll", "sendrecv,alltoall,gather,scatter", "-d", "all", "-o", "all", "-r", "1",
		"-b", "8", "-e", "1K", "-f", "16", "-n", "2", "-w", "1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := string(out)
	assert.Contains(t, s, "# Out of bounds values : 0 OK")
	var rows []string
	for _, line := range strings.Split(s, "\n") {
		if line != "" && line[0] != '#' {
			rows = append(rows, line)
		}
	}
	require.Len(t, rows, 4*12*2, s)
	for _, name := range []string{"sendrecv", "alltoall", "gather", "scatter"} {
		assert.Contains(t, s, "\n# "+name+"\n")
	}
	// sendrecv and alltoall: 2×12 rows each with N/A for time, algbw, busbw
	// and #wrong in place.
	assert.Equal(t, 2*12*2*4, strings.Count(s, "N/A"), s)
	assert.Equal(t, 2*12*2, strings.Count(s, "    none       1 "), "gather and scatter rows at root 1:\n%s", s)
}

func TestBenchFormatsAndErrors(t *testing.T) {
	bin := buildRingo(t)
	out, err := exec.Command(bin, "bench", "--transport", "loopback", "--ranks", "2", "-b", "1K", "-e", "2K", "-format", "csv").Output()
	if err != nil || !strings.HasPrefix(string(out), "collective,size_bytes") || strings.Count(string(out), "\n") != 3 {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "bench", "--transport", "loopback", "--ranks", "2", "-b", "1K", "-e", "1K", "-format", "json").Output()
	if err != nil || !strings.Contains(string(out), `"busbw_gbs"`) {
		t.Fatalf("json: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"bench", "-b", "1x"},
		{"bench", "-transport", "carrier-pigeon"},
		{"bench", "-ranks", "0"},
		{"bench", "-coll", "scan"},
		{"bench", "-d", "float128"},
		{"bench", "-r", "5", "--ranks", "2"},
		{"bench", "-procs"}, // -procs needs -gpus
		{"bench", "-gpus", "0,1", "-procs", "-b", "8", "-e", "8", "-w", "0"}, // ranks fail without CUDA; no hang
		{"bench", "-coll", "sendrecv,all_to_all"},
		{"bench", "-coll", "gather", "-r", "2", "--ranks", "2"},
		{"nonsense"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil {
			t.Errorf("%v succeeded:\n%s", args, out)
		}
	}
}

// TestPlanShow: ringo plan prints a plan's steps, writes its schedule
// document, reads that document back (checked), and refuses bad flags and
// documents with a message naming what is wrong.
func TestPlanShow(t *testing.T) {
	bin := buildRingo(t)
	out, err := exec.Command(bin, "plan", "--show", "-ranks", "2", "-b", "64K", "-proto", "LL", "-variant", "oneshot").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "variant oneshot") || strings.Count(string(out), "recvReduceCopy") != 4 {
		t.Fatalf("plan --show: %v\n%s", err, out)
	}
	doc, err := exec.Command(bin, "plan", "-ranks", "3", "-b", "3K", "-channels", "2", "-json").Output()
	if err != nil || !strings.HasPrefix(string(doc), `{"format": "ringo-schedule", "version": 2`) {
		t.Fatalf("plan -json: %v\n%s", err, doc)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "plan", "-schedule", path, "-rank", "2").CombinedOutput()
	if err != nil || strings.Count(string(out), "\n") != 2+2*5 {
		t.Fatalf("plan -schedule: %v\n%s", err, out)
	}
	broken := strings.Replace(string(doc), `"op":"recv"`, `"op":"send"`, 1)
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-schedule", path}, "schedule: "},
		{[]string{"plan", "-coll", "alltoall"}, `-coll: unknown name "alltoall"`},
		{[]string{"plan", "-variant", "oneshot", "-ranks", "3"}, "oneshot needs 2 ranks"},
		{[]string{"plan", "-proto", "LL64"}, "-proto: unknown name"},
		{[]string{"plan", "-rank", "5"}, "-rank 5"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v, want an error containing %q:\n%s", c.args, err, c.want, out)
		}
	}
}

// TestBenchRingAndVariant: -ring (an order, or reversed) and -variant reach
// the communicators, and the results are checked; a ring of the wrong size
// and a variant the transport cannot run are errors naming them.
func TestBenchRingAndVariant(t *testing.T) {
	bin := buildRingo(t)
	out, err := exec.Command(bin, "bench", "--transport", "loopback", "--ranks", "3", "-ring", "reversed", "-variant", "bidirectional",
		"-channels", "2", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `# ring [2 1 0], variant "bidirectional"`) || !strings.Contains(string(out), "# Out of bounds values : 0 OK") {
		t.Fatalf("loopback, reversed, bidirectional: %v\n%s", err, out)
	}
	// Processes connect both ways round the ring too.
	out, err = exec.Command(bin, "bench", "--ranks", "3", "-variant", "bidirectional", "-channels", "2", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `variant "bidirectional"`) || !strings.Contains(string(out), "# Out of bounds values : 0 OK") || strings.Contains(string(out), "using ring") {
		t.Fatalf("processes, bidirectional: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--transport", "loopback", "--ranks", "3", "-ring", "0,1", "-b", "1K", "-e", "1K"}, "Ring has 2 ranks, communicator 3"},
		{[]string{"bench", "--transport", "loopback", "--ranks", "3", "-ring", "0,x,1"}, "-ring"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v, want an error containing %q:\n%s", c.args, err, c.want, out)
		}
	}
}
