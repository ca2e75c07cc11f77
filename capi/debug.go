package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ringo-ccl/ringo/internal/env"
)

// logLevel is NCCL_DEBUG's level.
type logLevel int32

const (
	logUnread  logLevel = -1 // not read from the environment yet
	logNone    logLevel = 0
	logVersion logLevel = 1
	logWarn    logLevel = 2
	logInfo    logLevel = 3
)

// logger prints NCCL-style log lines on standard error. Its level —
// RINGO_DEBUG, or NCCL_DEBUG when that is unset or empty — is read from the
// environment on first use and again after reset
// (ncclResetDebugInit). Safe for concurrent use.
type logger struct {
	level atomic.Int32  // a logLevel
	subs  atomic.Uint32 // an env.Subsys: NCCL_DEBUG_SUBSYS's, read with the level

	mu   sync.Mutex // guards sink's output, so lines do not interleave
	sink func(line string)

	host        string
	versionOnce sync.Once
}

func newLogger(sink func(string)) *logger {
	l := &logger{sink: sink}
	l.level.Store(int32(logUnread))
	l.host, _ = os.Hostname()
	if i := strings.IndexByte(l.host, '.'); i >= 0 {
		l.host = l.host[:i] // NCCL prints the short host name
	}
	return l
}

func stderrSink(line string) { os.Stderr.WriteString(line) }

// parseLevel maps NCCL_DEBUG's level (env.DebugLevel) to a logLevel: TRACE
// prints what INFO does; ABORT and unset print nothing.
func parseLevel(s string) logLevel {
	switch s {
	case "VERSION":
		return logVersion
	case "WARN":
		return logWarn
	case "INFO", "TRACE":
		return logInfo
	}
	return logNone
}

func (l *logger) get() logLevel {
	if lv := logLevel(l.level.Load()); lv != logUnread {
		return lv
	}
	lv := parseLevel(env.DebugLevel())
	l.subs.Store(uint32(env.ReadDebugSubsys()))
	l.level.Store(int32(lv))
	return lv
}

// reset makes the next line re-read the environment.
func (l *logger) reset() { l.level.Store(int32(logUnread)) }

func (l *logger) emit(dev int, kind, format string, a ...any) {
	line := fmt.Sprintf("%s:%d:%d [%d] NCCL %s %s\n", l.host, os.Getpid(), syscall.Gettid(), dev, kind, fmt.Sprintf(format, a...))
	l.mu.Lock()
	l.sink(line)
	l.mu.Unlock()
}

// infof prints an INFO line of subsystems sub about CUDA device dev.
func (l *logger) infof(dev int, sub env.Subsys, format string, a ...any) {
	if l.get() >= logInfo && env.Subsys(l.subs.Load())&sub != 0 {
		l.emit(dev, "INFO", format, a...)
	}
}

// warnf prints a WARN line.
func (l *logger) warnf(dev int, format string, a ...any) {
	if l.get() >= logWarn {
		l.emit(dev, "WARN", format, a...)
	}
}

// version prints NCCL's banner once per process when a communicator is
// first created, under NCCL's rule: above WARN always, at VERSION and WARN
// only for rank 0 — as a bare line, as NCCL prints it at those levels.
func (l *logger) version(dev, rank int) {
	lv := l.get()
	if lv <= logNone || (lv <= logWarn && rank != 0) {
		return
	}
	l.versionOnce.Do(func() {
		if lv >= logInfo {
			l.emit(dev, "INFO", "NCCL version %s", versionString)
			return
		}
		l.mu.Lock()
		l.sink("NCCL version " + versionString + "\n")
		l.mu.Unlock()
	})
}
