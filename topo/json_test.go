package topo

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
)

func TestJSONRoundTrip(t *testing.T) {
	for _, tp := range []*Topology{fakeH200x2(), fakeMixed8()} {
		data, err := json.Marshal(tp)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(data)
		if err != nil {
			t.Fatalf("Decode: %v\n%s", err, data)
		}
		if !reflect.DeepEqual(back, tp) {
			t.Errorf("round trip changed the topology:\n%+v\n%+v", back, tp)
		}
		// Enums are written by name.
		for _, want := range []string{`"kind":"nvlink"`, `"kind":"self"`, `"kind":"rdma"`} {
			if !strings.Contains(string(data), want) {
				t.Errorf("JSON lacks %s:\n%s", want, data)
			}
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := json.Marshal(fakeH200x2())
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ data, want string }{
		"not JSON":           {`{"gpus": [`, "decoding JSON"},
		"unknown link kind":  {strings.Replace(string(good), `"kind":"nvlink"`, `"kind":"warp"`, 1), `"warp" is not a link kind`},
		"unknown NIC kind":   {strings.Replace(string(good), `"kind":"rdma"`, `"kind":"carrier-pigeon"`, 1), "is not a NIC kind"},
		"missing row":        {`{"gpus":[{"index":0},{"index":1}],"links":[[{"kind":"self"},{"kind":"pcie"}]]}`, "2 GPUs but 1 rows of links"},
		"short row":          {`{"gpus":[{"index":0},{"index":1}],"links":[[{"kind":"self"}],[{"kind":"pcie"},{"kind":"self"}]]}`, "row of links has 1 entries, want 2"},
		"self off diagonal":  {`{"gpus":[{"index":0},{"index":1}],"links":[[{"kind":"self"},{"kind":"self"}],[{"kind":"pcie"},{"kind":"self"}]]}`, "link GPU0 → GPU1: kind self off the diagonal"},
		"negative bandwidth": {`{"gpus":[{"index":0},{"index":1}],"links":[[{"kind":"self"},{"kind":"pcie","bandwidth_gbs":-1}],[{"kind":"pcie"},{"kind":"self"}]]}`, "bandwidth -1 GB/s"},
		"NVLinks on PCIe":    {`{"gpus":[{"index":0},{"index":1}],"links":[[{"kind":"self"},{"kind":"pcie","nvlinks":2}],[{"kind":"pcie"},{"kind":"self"}]]}`, "2 NVLinks on a pcie link"},
		"index twice":        {`{"gpus":[{"index":3},{"index":3}],"links":[[{"kind":"self"},{"kind":"pcie"}],[{"kind":"pcie"},{"kind":"self"}]]}`, "GPU index 3 appears twice"},
	} {
		_, err := Decode([]byte(c.data))
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrInvalidArgument saying %q", name, err, c.want)
		}
	}
	if _, err := json.Marshal(Link{Kind: numLinkKinds}); err == nil || !strings.Contains(err.Error(), "is not a link kind") {
		t.Errorf("marshalling a bad link kind: %v", err)
	}
}
