// Package env reads ringo's environment variables: each setting NAME is
// looked up as RINGO_NAME first, then as NCCL_NAME where NCCL has the same
// variable, so existing NCCL deployments keep working.
//
// One rule for a value that cannot be used, whatever the variable: it is an
// error (*Error, wrapping errs.ErrInvalidArgument) that names the variable,
// the value and what the variable accepts, and the communicator is not
// made — except where NCCL itself carries on with a fallback for that
// variable (it clamps a channel or socket count, ignores an unknown debug
// level or subsystem): there ringo does the same, with a warning (Fallback)
// naming the variable, the value and what it uses instead. Text where a
// number is wanted is always an error (NCCL would read it as 0). README's
// "Environment variables" says which way each variable goes.
package env

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
)

// Var is a setting's name without prefix, e.g. "BUFFSIZE".
type Var struct {
	Name string
	NCCL bool // also read NCCL_<Name>
}

// Lookup returns the variable's value and the full name it was found
// under. A variable set to nothing but spaces counts as unset.
func (v Var) Lookup() (value, name string, ok bool) {
	names := []string{"RINGO_" + v.Name}
	if v.NCCL {
		names = append(names, "NCCL_"+v.Name)
	}
	for _, n := range names {
		if s, ok := os.LookupEnv(n); ok && strings.TrimSpace(s) != "" {
			return s, n, true
		}
	}
	return "", "", false
}

var (
	warnMu   sync.Mutex
	warned   = map[string]bool{}
	warnSink = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
)

// SetWarnings sends warnings to sink, forgetting those already given so
// that each is given again, until restore is called. For tests.
func SetWarnings(sink func(msg string)) (restore func()) {
	warnMu.Lock()
	defer warnMu.Unlock()
	oldSink, oldWarned := warnSink, warned
	warnSink, warned = sink, map[string]bool{}
	return func() {
		warnMu.Lock()
		defer warnMu.Unlock()
		warnSink, warned = oldSink, oldWarned
	}
}

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

// DebugLevel reads NCCL_DEBUG (or RINGO_DEBUG) now: "" when unset, else
// VERSION, WARN, INFO, ABORT or TRACE (given in any case). Another value
// is warned about and read as unset, as NCCL ignores it.
func DebugLevel() string {
	v, name, ok := envDebug.Lookup()
	if !ok {
		return ""
	}
	level := strings.ToUpper(strings.TrimSpace(v))
	switch level {
	case "VERSION", "WARN", "INFO", "ABORT", "TRACE":
		return level
	}
	Fallback(name, v, "no debug output", "not a level (VERSION, WARN, INFO, ABORT, TRACE)")
	return ""
}

// debugInfo reports, once, whether NCCL_DEBUG / RINGO_DEBUG asks for INFO
// (or TRACE) messages.
var debugInfo = sync.OnceValue(func() bool {
	l := DebugLevel()
	return l == "INFO" || l == "TRACE"
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

// Error is a setting whose value cannot be used. It wraps
// errs.ErrInvalidArgument.
type Error struct {
	Name  string // the variable as it was found: RINGO_BUFFSIZE, NCCL_BUFFSIZE
	Value string
	Why   string // what is wrong, and what the variable accepts
}

func (e *Error) Error() string { return fmt.Sprintf("%s=%q: %s", e.Name, e.Value, e.Why) }

func (e *Error) Unwrap() error { return errs.ErrInvalidArgument }

// Invalid returns the error of variable name's unusable value.
func Invalid(name, value, format string, a ...any) error {
	return &Error{Name: name, Value: value, Why: fmt.Sprintf(format, a...)}
}

// Fallback warns, once, that variable name's value is not used as given,
// why, and what is used instead — for variables where NCCL falls back too.
func Fallback(name, value, using, format string, a ...any) {
	Warnf("%s=%q: %s; using %s", name, value, fmt.Sprintf(format, a...), using)
}

// set returns the variable's trimmed value and name when it is set.
func (v Var) set() (value, name string, ok bool) {
	value, name, ok = v.Lookup()
	return strings.TrimSpace(value), name, ok
}

// Int returns the variable as an integer in [lo, hi]; def when it is unset
// or empty; an *Error otherwise.
func (v Var) Int(def, lo, hi int) (int, error) {
	s, name, ok := v.set()
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		return def, Invalid(name, s, "want an integer in [%d, %d]", lo, hi)
	}
	return int(n), nil
}

// Flag returns a variable that is 0 or 1 as a bool (false when unset); an
// *Error for any other value.
func (v Var) Flag() (bool, error) {
	n, err := v.Int(0, 0, 1)
	return n == 1, err
}

// Clamp returns the variable as an integer, def when it is unset or empty.
// A number outside [lo, hi] is clamped into it with a warning, as NCCL
// clamps the variables this is for; text that is not a number is an
// *Error.
func (v Var) Clamp(def, lo, hi int) (int, error) {
	s, name, ok := v.set()
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return def, Invalid(name, s, "want an integer in [%d, %d]", lo, hi)
	}
	c := min(max(n, int64(lo)), int64(hi))
	if c != n {
		Fallback(name, s, strconv.FormatInt(c, 10), "outside [%d, %d]", lo, hi)
	}
	return int(c), nil
}

// Size returns the variable as a byte count (K, M, G suffixes) that is a
// multiple of mult in [lo, hi]; def when it is unset or empty; an *Error
// otherwise.
func (v Var) Size(def, lo, hi, mult int) (int, error) {
	s, name, ok := v.set()
	if !ok {
		return def, nil
	}
	n, err := ParseSize(s)
	if err != nil || n < int64(lo) || n > int64(hi) || n%int64(mult) != 0 {
		return def, Invalid(name, s, "want a multiple of %d bytes in [%s, %s] (K, M, G suffixes)", mult, FormatSize(int64(lo)), FormatSize(int64(hi)))
	}
	return int(n), nil
}

// Duration returns the variable as a duration ("90s", "5m", or plain
// seconds); def when it is unset or empty; an *Error when it does not
// parse. Zero or negative means no limit and is returned as is.
func (v Var) Duration(def time.Duration) (time.Duration, error) {
	s, name, ok := v.set()
	if !ok {
		return def, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return def, Invalid(name, s, "want a duration like 90s or 5m, or seconds")
	}
	return d, nil
}

// FormatSize writes a byte count the way ParseSize reads it, with the
// largest suffix that divides it: 1048576 is "1M".
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
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
