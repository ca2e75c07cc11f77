package env

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func captureWarnings(t *testing.T) *[]string {
	var got []string
	t.Cleanup(SetWarnings(func(m string) { got = append(got, m) }))
	return &got
}

// TestPrecedence: RINGO_ wins over NCCL_; a variable set to spaces counts
// as unset, so the NCCL_ spelling or the default applies.
func TestPrecedence(t *testing.T) {
	v := Var{Name: "TESTSIZE", NCCL: true}
	got, err := v.Size(7, 1, 1<<30, 1)
	require.NoError(t, err)
	assert.Equal(t, 7, got, "unset")
	t.Setenv("NCCL_TESTSIZE", "2M")
	got, _ = v.Size(7, 1, 1<<30, 1)
	assert.Equal(t, 2<<20, got, "NCCL_ value")
	t.Setenv("RINGO_TESTSIZE", " ")
	got, _ = v.Size(7, 1, 1<<30, 1)
	assert.Equal(t, 2<<20, got, "RINGO_ set to spaces counts as unset")
	t.Setenv("RINGO_TESTSIZE", "64k")
	got, _ = v.Size(7, 1, 1<<30, 1)
	assert.Equal(t, 64<<10, got, "RINGO_ must win")
}

// TestBadValues: every reader turns a value it cannot use into an *Error
// naming the variable, the value and what it accepts (wrapping
// errs.ErrInvalidArgument), and warns about nothing; Clamp clamps numbers
// with a warning, as NCCL does.
func TestBadValues(t *testing.T) {
	v := Var{Name: "TESTVAR", NCCL: true}
	cases := []struct {
		name, value string
		read        func() (any, error)
		want        any    // the value read, when usable
		err         string // else the error's text after the variable
		warn        string // a warning expected
	}{
		{"int", "12", func() (any, error) { return v.Int(7, 1, 16) }, 12, "", ""},
		{"int text", "lots", func() (any, error) { return v.Int(7, 1, 16) }, nil, `"lots": want an integer in [1, 16]`, ""},
		{"int above", "17", func() (any, error) { return v.Int(7, 1, 16) }, nil, `"17": want an integer in [1, 16]`, ""},
		{"int below", "0", func() (any, error) { return v.Int(7, 1, 16) }, nil, `"0": want an integer in [1, 16]`, ""},
		{"flag 1", "1", func() (any, error) { return v.Flag() }, true, "", ""},
		{"flag 0", "0", func() (any, error) { return v.Flag() }, false, "", ""},
		{"flag 2", "2", func() (any, error) { return v.Flag() }, nil, `"2": want an integer in [0, 1]`, ""},
		{"flag yes", "yes", func() (any, error) { return v.Flag() }, nil, `"yes": want an integer in [0, 1]`, ""},
		{"size", "4M", func() (any, error) { return v.Size(1<<20, 128, 1<<30, 128) }, 4 << 20, "", ""},
		{"size 1", "1", func() (any, error) { return v.Size(1<<20, 128, 1<<30, 128) }, nil,
			`"1": want a multiple of 128 bytes in [128, 1G] (K, M, G suffixes)`, ""},
		{"size 131", "131", func() (any, error) { return v.Size(1<<20, 128, 1<<30, 128) }, nil, `"131": want a multiple of 128 bytes`, ""},
		{"size 2G", "2G", func() (any, error) { return v.Size(1<<20, 128, 1<<30, 128) }, nil, `"2G": want a multiple of 128 bytes`, ""},
		{"size overflow", "99999999999G", func() (any, error) { return v.Size(1<<20, 128, 1<<30, 128) }, nil, `"99999999999G": want a multiple`, ""},
		{"clamp inside", "5", func() (any, error) { return v.Clamp(7, 1, 64) }, 5, "", ""},
		{"clamp above", "999", func() (any, error) { return v.Clamp(7, 1, 64) }, 64, "", `NCCL_TESTVAR="999": outside [1, 64]; using 64`},
		{"clamp below", "-3", func() (any, error) { return v.Clamp(7, 1, 64) }, 1, "", `NCCL_TESTVAR="-3": outside [1, 64]; using 1`},
		{"clamp text", "many", func() (any, error) { return v.Clamp(7, 1, 64) }, nil, `"many": want an integer in [1, 64]`, ""},
		{"duration", "2m", func() (any, error) { return v.Duration(time.Hour) }, 2 * time.Minute, "", ""},
		{"duration seconds", "1.5", func() (any, error) { return v.Duration(time.Hour) }, 1500 * time.Millisecond, "", ""},
		{"duration zero", "0", func() (any, error) { return v.Duration(time.Hour) }, time.Duration(0), "", ""},
		{"duration text", "soon", func() (any, error) { return v.Duration(time.Hour) }, nil, `"soon": want a duration like 90s or 5m, or seconds`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warns := captureWarnings(t)
			t.Setenv("NCCL_TESTVAR", c.value)
			got, err := c.read()
			if c.err != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, errs.ErrInvalidArgument)
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, "NCCL_TESTVAR", e.Name)
				assert.Contains(t, err.Error(), "NCCL_TESTVAR="+c.err)
				assert.Empty(t, *warns)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			if c.warn == "" {
				assert.Empty(t, *warns)
			} else {
				require.Len(t, *warns, 1)
				assert.Contains(t, (*warns)[0], c.warn)
			}
		})
	}
}

func TestDebugLevel(t *testing.T) {
	for value, want := range map[string]string{"": "", "info": "INFO", " Warn ": "WARN", "TRACE": "TRACE", "loud": ""} {
		warns := captureWarnings(t)
		t.Setenv("NCCL_DEBUG", value)
		assert.Equal(t, want, DebugLevel(), "%q", value)
		if value == "loud" {
			require.Len(t, *warns, 1)
			assert.Contains(t, (*warns)[0], `NCCL_DEBUG="loud": not a level (VERSION, WARN, INFO, ABORT, TRACE); using no debug output`)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 128: "128", 1024: "1K", 1 << 20: "1M", 3 << 30: "3G", 1536: "1536"} {
		assert.Equal(t, want, FormatSize(n))
		if back, err := ParseSize(want); assert.NoError(t, err) {
			assert.Equal(t, n, back)
		}
	}
}

func TestParseList(t *testing.T) {
	names := []string{"LL", "LL128", "Simple"}
	cases := []struct {
		in   string
		want []bool
		err  string
	}{
		{"LL", []bool{true, false, false}, ""},
		{"simple,ll128", []bool{false, true, true}, ""},
		{"^LL", []bool{false, true, true}, ""},
		{"allreduce:LL;broadcast:Simple", []bool{true, false, false}, ""},
		{"Simple;allreduce:LL", []bool{true, false, false}, ""},
		{"broadcast:LL", nil, "nothing selected"},
		{"Fast", nil, `unknown name "Fast"`},
		{"", nil, "nothing selected"},
	}
	for _, c := range cases {
		got, err := ParseList(c.in, names, "allreduce")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"LL", "^ll,simple", "allreduce:LL;Simple", ";;", "^"} {
		f.Add(s)
	}
	names := []string{"LL", "LL128", "Simple"}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseList(s, names, "allreduce")
		if err == nil && len(set) != len(names) {
			t.Fatalf("%q: set of %d", s, len(set))
		}
	})
}

func TestParseSubsys(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Subsys
		unknown string
	}{
		{"", DefaultSubsys, "[]"},
		{"INIT", SubInit, "[]"},
		{"init, net ,Coll", SubInit | SubNet | SubColl, "[]"},
		{"ALL", SubAll, "[]"},
		{"^INIT,ENV", SubAll &^ (SubInit | SubEnv), "[]"},
		{"INIT,WIBBLE", SubInit, "[WIBBLE]"},
	} {
		got, unknown := ParseSubsys(c.in)
		if got != c.want || fmt.Sprint(unknown) != c.unknown {
			t.Errorf("%q: %b %v, want %b %s", c.in, got, unknown, c.want, c.unknown)
		}
	}
}

// FuzzParseSubsys: any NCCL_DEBUG_SUBSYS value parses without panicking to
// a set of known subsystems, and the unknown names it reports are among the
// value's.
func FuzzParseSubsys(f *testing.F) {
	for _, s := range []string{"", "INIT", "^INIT,ENV", "all", "init,,net", "WIBBLE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, unknown := ParseSubsys(s)
		if set&^SubAll != 0 {
			t.Fatalf("%q: set %b outside the subsystems", s, set)
		}
		for _, u := range unknown {
			if !strings.Contains(strings.ToUpper(s), u) {
				t.Fatalf("%q: unknown %q is not in it", s, u)
			}
		}
	})
}
