package sim

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/ring"
)

func TestDefaultAndRoundTrip(t *testing.T) {
	m := Default()
	for _, p := range []ring.Protocol{ring.LL, ring.LL128, ring.Simple} {
		if _, err := m.Params(p); err != nil {
			t.Fatal(err)
		}
	}
	noLL128 := *m
	noLL128.Protocols = nil
	for _, p := range m.Protocols {
		if p.Proto != "LL128" {
			noLL128.Protocols = append(noLL128.Protocols, p)
		}
	}
	if _, err := noLL128.Params(ring.LL128); !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), "no LL128 parameters") {
		t.Fatalf("LL128: %v", err)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	var file bytes.Buffer
	if err := m.Encode(&file); err != nil || os.WriteFile(path, file.Bytes(), 0o644) != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	m.Encode(&a)
	back.Encode(&b)
	if a.String() != b.String() {
		t.Fatalf("round trip changed the model:\n%s\n%s", a.String(), b.String())
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("loaded a missing file")
	}
}

func TestValidateNamesTheField(t *testing.T) {
	good := Params{Proto: "LL", LaunchUs: 3, BlockUs: 0.05, AlphaUs: 1, ChannelGBs: 10, LinkGBs: 200}
	cases := []struct {
		edit func(*Params)
		want string
	}{
		{func(p *Params) { p.Proto = "LL256" }, `proto: tune: unknown`},
		{func(p *Params) { p.LaunchUs = -1 }, "launch_us -1"},
		{func(p *Params) { p.BlockUs = math.NaN() }, "block_us NaN"},
		{func(p *Params) { p.AlphaUs = math.Inf(1) }, "alpha_us +Inf"},
		{func(p *Params) { p.ChannelGBs = 0 }, "channel_gbs 0, need > 0"},
		{func(p *Params) { p.LinkGBs = -5 }, "link_gbs -5"},
		{func(p *Params) { p.BuffBytes = -1 }, "buff_bytes -1"},
	}
	for _, c := range cases {
		p := good
		c.edit(&p)
		err := (&Model{Protocols: []Params{p}}).Validate()
		if !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", p, err, c.want)
		}
	}
	if err := (&Model{Protocols: []Params{good, good}}).Validate(); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate protocol: %v", err)
	}
	if err := (&Model{Machine: "m"}).Validate(); err == nil || !strings.Contains(err.Error(), "no protocols") {
		t.Errorf("empty model: %v", err)
	}
	for _, in := range []string{`{`, `{"protocols": [{"proto": "Simple", "channel_gbs": 0, "link_gbs": 1}]}`} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrInvalidModel) {
			t.Errorf("Parse(%s): %v", in, err)
		}
	}
}
