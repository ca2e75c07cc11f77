// Package env reads ringo's environment variables: each setting NAME is
// looked up as RINGO_NAME first, then as NCCL_NAME where NCCL has the same
// variable, so existing NCCL deployments keep working. A value that does not
// parse is never fatal: the caller falls back to its default and a warning
// naming the variable and the value used instead goes to standard error, once
// per variable and value.
package env

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Var is a setting's name without prefix, e.g. "BUFFSIZE".
type Var struct {
	Name string
	NCCL bool // also read NCCL_<Name>
}

// Lookup returns the variable's value and the full name it was found under.
func (v Var) Lookup() (value, name string, ok bool) {
	if s, ok := os.LookupEnv("RINGO_" + v.Name); ok {
		return s, "RINGO_" + v.Name, true
	}
	if v.NCCL {
		if s, ok := os.LookupEnv("NCCL_" + v.Name); ok {
			return s, "NCCL_" + v.Name, true
		}
	}
	return "", "", false
}

var (
	warnMu   sync.Mutex
	warned   = map[string]bool{}
	warnSink = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
)

// Warnf reports a bad setting once per distinct message.
func Warnf(format string, a ...any) {
	msg := "ringo WARN " + fmt.Sprintf(format, a...)
	warnMu.Lock()
	defer warnMu.Unlock()
	if warned[msg] {
		return
	}
	warned[msg] = true
	warnSink(msg)
}

var envDebug = Var{Name: "DEBUG", NCCL: true}

// debugInfo reports, once, whether NCCL_DEBUG / RINGO_DEBUG asks for INFO
// (or TRACE) messages.
var debugInfo = sync.OnceValue(func() bool {
	v, _, _ := envDebug.Lookup()
	v = strings.ToUpper(strings.TrimSpace(v))
	return v == "INFO" || v == "TRACE"
})

// Info prints an informational message on standard error, in NCCL's
// style, when NCCL_DEBUG (or RINGO_DEBUG) is INFO or TRACE and sub is among
// the subsystems NCCL_DEBUG_SUBSYS selects (by default INIT, BOOTSTRAP,
// ENV).
func Info(sub Subsys, format string, a ...any) {
	if debugInfo() && sub&DebugSubsys() != 0 {
		host, _ := os.Hostname()
		fmt.Fprintf(os.Stderr, "%s:%d ringo INFO %s\n", host, os.Getpid(), fmt.Sprintf(format, a...))
	}
}

// Int returns the variable as an integer in [lo, hi], or def (with a
// warning) when it is set but unusable. Sizes accept K, M and G suffixes
// (binary units).
func (v Var) Int(def, lo, hi int) int {
	s, name, ok := v.Lookup()
	if !ok || strings.TrimSpace(s) == "" {
		return def
	}
	n, err := ParseSize(s)
	if err != nil || n < int64(lo) || n > int64(hi) {
		Warnf("%s=%q is not an integer in [%d, %d]; using %d", name, s, lo, hi, def)
		return def
	}
	return int(n)
}

// Duration returns the variable as a duration ("90s", "5m", or plain
// seconds), or def with a warning when it does not parse. Zero or negative
// means no limit and is returned as is.
func (v Var) Duration(def time.Duration) time.Duration {
	s, name, ok := v.Lookup()
	if !ok || strings.TrimSpace(s) == "" {
		return def
	}
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		Warnf("%s=%q is not a duration (like 30s or 5m); using %v", name, s, def)
		return def
	}
	return d
}

// ParseSize parses a byte count with an optional K, M or G suffix (binary
// units), as NCCL's size variables and nccl-tests' -b/-e flags take them.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, s = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size like 8, 64K, 32M or 1G", s)
	}
	if n > (1<<62)/mult || n < -(1<<62)/mult {
		return 0, fmt.Errorf("%q overflows", s)
	}
	return n * mult, nil
}
