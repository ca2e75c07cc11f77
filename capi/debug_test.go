package main

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

type lines struct {
	mu sync.Mutex
	l  []string
}

func (s *lines) add(l string) {
	s.mu.Lock()
	s.l = append(s.l, l)
	s.mu.Unlock()
}

func (s *lines) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.l, "")
}

func TestDebugLevels(t *testing.T) {
	cases := map[string]logLevel{"": logNone, "VERSION": logVersion, "warn": logWarn, "INFO": logInfo, "TRACE": logInfo, "ABORT": logNone, "junk": logNone}
	for s, want := range cases {
		t.Setenv("NCCL_DEBUG", s)
		if got := newLogger(func(string) {}).get(); got != want {
			t.Errorf("NCCL_DEBUG=%q: level %d, want %d", s, got, want)
		}
	}
	t.Setenv("NCCL_DEBUG", "WARN")
	t.Setenv("RINGO_DEBUG", "INFO")
	l := newLogger(func(string) {})
	if l.get() != logInfo {
		t.Fatal("RINGO_DEBUG does not take precedence over NCCL_DEBUG")
	}
	t.Setenv("RINGO_DEBUG", "")
	if l.get() != logInfo {
		t.Fatal("the level was re-read without ncclResetDebugInit")
	}
	l.reset()
	if l.get() != logWarn {
		t.Fatal("with RINGO_DEBUG empty, NCCL_DEBUG=WARN should apply after ncclResetDebugInit")
	}
}

// NCCL_DEBUG=INFO: NCCL's version banner and one Init COMPLETE line per
// rank; unset: nothing.
func TestInfoLines(t *testing.T) {
	t.Setenv("RINGO_DEBUG", "INFO")
	tl := newTestLib(t)
	var out lines
	tl.log = newLogger(out.add)
	hs := tl.initGroup(t, id(50), 3, 4)
	got := out.all()
	if !regexp.MustCompile(`(?m)^[^:]*:\d+:\d+ \[3\] NCCL INFO NCCL version 2\.27\.7\+ringo$`).MatchString(got) {
		t.Errorf("no version banner in:\n%s", got)
	}
	for r, dev := range []int{3, 4} {
		re := regexp.MustCompile(`NCCL INFO ringo 2\.27\.7\+ringo comm 0x[0-9a-f]+ rank ` + string(rune('0'+r)) +
			` nranks 2 cudaDev ` + string(rune('0'+dev)) + ` commId 0x[0-9a-f]+ - Init COMPLETE`)
		if !re.MatchString(got) {
			t.Errorf("no Init COMPLETE line for rank %d in:\n%s", r, got)
		}
	}
	if strings.Count(got, "NCCL version") != 1 {
		t.Errorf("banner printed %d times", strings.Count(got, "NCCL version"))
	}
	tl.destroy(hs[0])
	if !strings.Contains(out.all(), "Destroy COMPLETE") {
		t.Error("no Destroy COMPLETE line")
	}

	t.Setenv("RINGO_DEBUG", "")
	t.Setenv("NCCL_DEBUG", "")
	tl2 := newTestLib(t)
	var quiet lines
	tl2.log = newLogger(quiet.add)
	tl2.initGroup(t, id(51), 0)
	tl2.record(invalidArg("x"))
	if s := quiet.all(); s != "" {
		t.Fatalf("printed without NCCL_DEBUG:\n%s", s)
	}
}

// At NCCL_DEBUG=WARN a failed call prints one WARN line; rank 0 prints the
// banner as a bare line.
func TestWarnLines(t *testing.T) {
	t.Setenv("RINGO_DEBUG", "WARN")
	tl := newTestLib(t)
	var out lines
	tl.log = newLogger(out.add)
	tl.initGroup(t, id(52), 0)
	tl.record(invalidUsage("ncclSend: point-to-point is not supported by ringo"))
	got := out.all()
	if !strings.Contains(got, "\nNCCL version 2.27.7+ringo\n") && !strings.HasPrefix(got, "NCCL version 2.27.7+ringo\n") {
		t.Errorf("no bare banner in:\n%s", got)
	}
	if !regexp.MustCompile(`NCCL WARN ncclSend: point-to-point is not supported by ringo\n`).MatchString(got) {
		t.Errorf("no WARN line in:\n%s", got)
	}
	if strings.Contains(got, "INFO") {
		t.Errorf("INFO at WARN level:\n%s", got)
	}
}

// NCCL_DEBUG_SUBSYS filters INFO lines: the Init lines are INIT's, so
// ^INIT silences them (the banner stays) and INIT,COLL keeps them.
func TestDebugSubsys(t *testing.T) {
	t.Setenv("RINGO_DEBUG", "INFO")
	for i, c := range []struct {
		subsys string
		init   bool
	}{{"^INIT", false}, {"INIT,COLL", true}, {"NET", false}, {"", true}} {
		t.Setenv("NCCL_DEBUG_SUBSYS", c.subsys)
		tl := newTestLib(t)
		var out lines
		tl.log = newLogger(out.add)
		tl.initGroup(t, id(byte(60+i)), 0)
		got := out.all()
		if strings.Contains(got, "Init COMPLETE") != c.init || !strings.Contains(got, "NCCL version") {
			t.Errorf("NCCL_DEBUG_SUBSYS=%q:\n%s", c.subsys, got)
		}
	}
}

func TestRendezvousTimeoutEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 5 * time.Minute, "90ms": 90 * time.Millisecond, "2": 2 * time.Second, "0": 0} {
		t.Setenv("RINGO_TIMEOUT", v)
		if got := rendezvousTimeout(); got != want {
			t.Errorf("RINGO_TIMEOUT=%q: %v, want %v", v, got, want)
		}
	}
	// No limit: the wait ends only when the ranks come.
	tl := newTestLib(t)
	tl.setTimeout(0)
	done := make(chan error, 1)
	go func() {
		_, err := tl.initRank(1, 2, 0, id(53))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("returned %v with a rank missing and no timeout", err)
	case <-time.After(30 * time.Millisecond):
	}
	var h unsafe.Pointer
	if err := tl.library.initRank("ncclCommInitRank", 2, ptr(&h), 2, 1, ptr(id(53)), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
