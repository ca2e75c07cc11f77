package rdma

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

var testPorts = []Port{{"mlx5_0", 1}, {"mlx5_1", 1}, {"mlx5_10", 1}, {"mlx5_10", 2}, {"rocep1s0", 1}}

func TestParseHCA(t *testing.T) {
	for _, c := range []struct {
		value string
		want  HCASpec
		err   string // substring of the error; "" for none
	}{
		{"", HCASpec{}, ""},
		{"  ", HCASpec{}, ""},
		{"mlx5_0", HCASpec{Entries: []HCAEntry{{"mlx5_0", 0}}}, ""},
		{"mlx5_0:1,mlx5_1", HCASpec{Entries: []HCAEntry{{"mlx5_0", 1}, {"mlx5_1", 0}}}, ""},
		{"=mlx5_1", HCASpec{Exact: true, Entries: []HCAEntry{{"mlx5_1", 0}}}, ""},
		{"^mlx5_1:1", HCASpec{Exclude: true, Entries: []HCAEntry{{"mlx5_1", 1}}}, ""},
		{"^=mlx5_1", HCASpec{Exclude: true, Exact: true, Entries: []HCAEntry{{"mlx5_1", 0}}}, ""},
		{" mlx5_0 , ,mlx5_1 : 2 ,", HCASpec{Entries: []HCAEntry{{"mlx5_0", 0}, {"mlx5_1", 2}}}, ""},
		{"mlx5_0:x", HCASpec{}, `port "x"`},
		{"mlx5_0:0", HCASpec{}, `port "0"`},
		{"mlx5_0:-1", HCASpec{}, `port "-1"`},
		{"mlx5_0:", HCASpec{}, `port ""`},
		{"mlx5_0:1:2", HCASpec{}, `port "1:2"`},
		{"mlx5_0:256", HCASpec{}, `port "256"`},
		{":1", HCASpec{}, "no device name"},
		{"^", HCASpec{}, "names no device"},
		{"=", HCASpec{}, "names no device"},
		{"=^mlx5_0", HCASpec{}, "stray character"},
		{"mlx5_0,^mlx5_1", HCASpec{}, "stray character"},
	} {
		got, err := ParseHCA("NCCL_IB_HCA", c.value)
		if c.err != "" {
			if err == nil || !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.err) ||
				!strings.Contains(err.Error(), "NCCL_IB_HCA") {
				t.Errorf("ParseHCA(%q) = %+v, %v; want an error naming NCCL_IB_HCA and saying %q", c.value, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseHCA(%q) = %+v, %v; want %+v", c.value, got, err, c.want)
		}
	}
}

func TestSelectHCA(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []Port
		err   string
	}{
		{"", testPorts, ""},
		{"mlx5_1", []Port{{"mlx5_1", 1}, {"mlx5_10", 1}, {"mlx5_10", 2}}, ""}, // prefix
		{"=mlx5_1", []Port{{"mlx5_1", 1}}, ""},
		{"mlx5_0:1,mlx5_10:2", []Port{{"mlx5_0", 1}, {"mlx5_10", 2}}, ""},
		{"^mlx5", []Port{{"rocep1s0", 1}}, ""},
		{"^=mlx5_1", []Port{{"mlx5_0", 1}, {"mlx5_10", 1}, {"mlx5_10", 2}, {"rocep1s0", 1}}, ""},
		{"^mlx5_10:2", []Port{{"mlx5_0", 1}, {"mlx5_1", 1}, {"mlx5_10", 1}, {"rocep1s0", 1}}, ""},
		{"=mlx5", nil, "matches none of the RDMA ports found: mlx5_0:1, mlx5_1:1, mlx5_10:1, mlx5_10:2, rocep1s0:1"},
		{"mlx5_0:2", nil, "matches none"},
		{"^mlx5,roce", nil, "matches none"},
	} {
		spec, err := ParseHCA("NCCL_IB_HCA", c.value)
		if err != nil {
			t.Fatalf("ParseHCA(%q): %v", c.value, err)
		}
		got, err := spec.Select("NCCL_IB_HCA", c.value, testPorts)
		if c.err != "" {
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Select(%q) = %v, %v; want an error saying %q", c.value, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Select(%q) = %v, %v; want %v", c.value, got, err, c.want)
		}
	}
	if _, err := (HCASpec{}).Select("NCCL_IB_HCA", "", nil); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Select with no devices: %v", err)
	}
}

func TestSelectPortsReadsEnv(t *testing.T) {
	t.Setenv("NCCL_IB_HCA", "mlx5_0:z")
	_, err := SelectPorts()
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "NCCL_IB_HCA") {
		t.Fatalf("SelectPorts with a bad NCCL_IB_HCA: %v", err)
	}
	t.Setenv("RINGO_IB_HCA", "mlx5_0:y")
	_, err = SelectPorts()
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "RINGO_IB_HCA") {
		t.Fatalf("SelectPorts with a bad RINGO_IB_HCA: %v", err)
	}
}

func FuzzParseHCA(f *testing.F) {
	for _, s := range []string{"", "mlx5_0:1,mlx5_1", "^=mlx5_1", "=a:3", ":", "^", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseHCA("NCCL_IB_HCA", s)
		if err != nil {
			return
		}
		for _, e := range spec.Entries {
			if e.Name == "" || e.Port < 0 || e.Port > 255 {
				t.Fatalf("ParseHCA(%q) accepted entry %+v", s, e)
			}
		}
		got, err := spec.Select("NCCL_IB_HCA", s, testPorts)
		if err == nil && len(got) == 0 {
			t.Fatalf("Select(%q) returned nothing without an error", s)
		}
	})
}
