// Package nvtxtest attaches a recording NVTX tool to a test's child
// process: lib/inject.c, loaded by NVTX through NVTX_INJECTION64_PATH as
// Nsight Systems loads its own, writes every ringo range to a log that Read
// parses.
package nvtxtest

import (
	"bufio"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

//go:embed lib/inject.c
var injectC []byte

// EnvLibrary names a prebuilt injection library (the GPU bundle ships one,
// the GPU machine having no compiler guaranteed); without it Env compiles
// lib/inject.c with cc.
const EnvLibrary = "RINGO_NVTX_INJECTION"

// Env returns the environment that attaches the recorder to a child
// process, and the log it will write.
func Env(t testing.TB) (env []string, log string) {
	t.Helper()
	dir := t.TempDir()
	lib := os.Getenv(EnvLibrary)
	if lib == "" {
		lib = filepath.Join(dir, "libinject.so")
		src := filepath.Join(dir, "inject.c")
		if err := os.WriteFile(src, injectC, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
			t.Fatalf("building the NVTX recorder: %v\n%s", err, out)
		}
	}
	log = filepath.Join(dir, "nvtx.log")
	return []string{"NVTX_INJECTION64_PATH=" + lib, "RINGO_NVTX_LOG=" + log}, log
}

// A Range is one range the recorder saw start, and whether it ended.
type Range struct {
	Domain   string
	Category string // the category's name, or its number when unnamed
	Color    uint32
	Payload  uint64
	Message  string
	Ended    bool
}

// Read parses the recorder's log into its ranges, in start order.
func Read(log string) ([]Range, error) {
	f, err := os.Open(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	domains := map[string]string{}
	categories := map[[2]string]string{}
	var out []Range
	open := map[[2]string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		bad := func() ([]Range, error) { return nil, fmt.Errorf("nvtx log: bad line %q", line) }
		if len(fs) < 3 {
			return bad()
		}
		switch fs[0] {
		case "domain":
			domains[fs[1]] = strings.Join(fs[2:], " ")
		case "category":
			if len(fs) < 4 {
				return bad()
			}
			categories[[2]string{fs[1], fs[2]}] = strings.Join(fs[3:], " ")
		case "start":
			if len(fs) < 7 {
				return bad()
			}
			color, err1 := strconv.ParseUint(fs[4], 16, 32)
			payload, err2 := strconv.ParseUint(fs[5], 10, 64)
			if err1 != nil || err2 != nil {
				return bad()
			}
			cat, ok := categories[[2]string{fs[1], fs[3]}]
			if !ok {
				cat = fs[3]
			}
			open[[2]string{fs[1], fs[2]}] = len(out)
			out = append(out, Range{Domain: domains[fs[1]], Category: cat, Color: uint32(color), Payload: payload,
				Message: strings.Join(fs[6:], " ")})
		case "end":
			i, ok := open[[2]string{fs[1], fs[2]}]
			if !ok {
				return nil, fmt.Errorf("nvtx log: %q ends a range that never started", line)
			}
			delete(open, [2]string{fs[1], fs[2]})
			out[i].Ended = true
		default:
			return bad()
		}
	}
	return out, sc.Err()
}
