package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/topo"
)

// TestTopoWithoutGPU runs "ringo topo", built without the cuda tag: it
// must say plainly why no GPU is listed, in text and in JSON, and succeed.
func TestTopoWithoutGPU(t *testing.T) {
	bin := buildRingo(t)
	out, err := exec.Command(bin, "topo").Output()
	if err != nil {
		t.Fatalf("ringo topo: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "No GPU listed: ") || !strings.Contains(string(out), "this build has no GPU support") {
		t.Errorf("ringo topo:\n%s", out)
	}
	out, err = exec.Command(bin, "topo", "-json").Output()
	if err != nil {
		t.Fatalf("ringo topo -json: %v\n%s", err, out)
	}
	var got struct {
		Topology json.RawMessage `json:"topology"`
		Ring     any             `json:"ring"`
		Error    string          `json:"error"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ringo topo -json: %v\n%s", err, out)
	}
	if !strings.Contains(got.Error, "no GPU support") || got.Ring != nil {
		t.Errorf("ringo topo -json: error %q, ring %v", got.Error, got.Ring)
	}
	if tp, err := topo.Decode(got.Topology); err != nil || len(tp.GPUs) != 0 {
		t.Errorf("ringo topo -json's topology: %v, %v", tp, err)
	}
	for _, args := range [][]string{{"topo", "extra"}, {"topo", "-bogus"}} {
		err := exec.Command(bin, args...).Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Errorf("ringo %v: %v, want a failure", args, err)
		}
	}
}

// TestTopoJSONRing: the JSON ring names CUDA ordinals, not positions.
func TestTopoJSONRing(t *testing.T) {
	nv := topo.Link{Kind: topo.NVLink, NVLinks: 18, BandwidthGBs: 478}
	pcie := topo.Link{Kind: topo.PCIe, BandwidthGBs: 12}
	self := topo.Link{Kind: topo.Self}
	tp := &topo.Topology{
		GPUs:  []topo.GPU{{Index: 4}, {Index: 5}, {Index: 6}, {Index: 7}},
		Links: [][]topo.Link{{self, pcie, nv, nv}, {pcie, self, nv, nv}, {nv, nv, self, pcie}, {nv, nv, pcie, self}},
	}
	c, err := topo.Order(tp)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeTopoJSON(&b, tp, &c, nil); err != nil {
		t.Fatal(err)
	}
	var got topoJSON
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if want := []int{4, 6, 5, 7}; got.Ring == nil || !reflect.DeepEqual(got.Ring.GPUs, want) || got.Ring.BottleneckGBs != 478 {
		t.Errorf("ring %+v, want GPUs %v at 478 GB/s", got.Ring, want)
	}
	if got.Matrix.Cells[0][2] != "NV18" || got.Matrix.Devices[3] != "GPU7" || got.Error != "" {
		t.Errorf("matrix %+v, error %q", got.Matrix, got.Error)
	}
}
