package env

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func captureWarnings(t *testing.T) *[]string {
	var got []string
	old := warnSink
	warnSink = func(m string) { got = append(got, m) }
	t.Cleanup(func() { warnSink = old })
	return &got
}

func TestIntPrecedenceAndWarnings(t *testing.T) {
	warns := captureWarnings(t)
	v := Var{Name: "TESTSIZE", NCCL: true}
	if got := v.Int(7, 1, 1<<30); got != 7 {
		t.Fatalf("unset: %d", got)
	}
	t.Setenv("NCCL_TESTSIZE", "2M")
	if got := v.Int(7, 1, 1<<30); got != 2<<20 {
		t.Fatalf("NCCL_ value: %d", got)
	}
	t.Setenv("RINGO_TESTSIZE", "64k")
	if got := v.Int(7, 1, 1<<30); got != 64<<10 {
		t.Fatalf("RINGO_ must win: %d", got)
	}
	t.Setenv("RINGO_TESTSIZE", "lots")
	if got := v.Int(7, 1, 1<<30); got != 7 {
		t.Fatalf("bad value: %d", got)
	}
	t.Setenv("RINGO_TESTSIZE", "99999999999G")
	if got := v.Int(7, 1, 1<<30); got != 7 {
		t.Fatalf("overflowing value: %d", got)
	}
	if len(*warns) != 2 || !strings.Contains((*warns)[0], "RINGO_TESTSIZE") || !strings.Contains((*warns)[0], "using 7") {
		t.Fatalf("warnings: %q", *warns)
	}
}

func TestDuration(t *testing.T) {
	captureWarnings(t)
	v := Var{Name: "TESTTIME"}
	for s, want := range map[string]time.Duration{"30": 30 * time.Second, "1.5": 1500 * time.Millisecond, "2m": 2 * time.Minute, "soon": time.Hour, "0": 0} {
		t.Setenv("RINGO_TESTTIME", s)
		if got := v.Duration(time.Hour); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
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
