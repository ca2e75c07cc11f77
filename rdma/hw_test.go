//go:build ibverbs

package rdma

import (
	"math/rand/v2"

	"github.com/ringo-ccl/ringo/internal/verbs"
	"testing"
)

// TestVerbsWire runs the fake's wire test over the first selected RDMA
// port, both ends on it (a loopback connection through the NIC).
func TestVerbsWire(t *testing.T) {
	if len(Ports()) == 0 {
		t.Skip("no RDMA device found (rdmamap lists none): the verbs transport has not run on RDMA hardware here")
	}
	ports, err := SelectPorts()
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerbs()
	if err != nil {
		t.Fatal(err)
	}
	w := newPair(t, v, ports[0].Device, ports[0].Port)
	runPosts(t, w, planPosts(2000, rand.New(rand.NewPCG(3, 4))))
}

func TestVerbsHotPathDoesNotAllocate(t *testing.T) {
	if len(Ports()) == 0 {
		t.Skip("no RDMA device found (rdmamap lists none): the verbs transport has not run on RDMA hardware here")
	}
	// The fake's test exercises the same wire code; here the provider is
	// the verbs one.
	testHotPath(t, func(t testing.TB) *wirePair {
		ports, err := SelectPorts()
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewVerbs()
		if err != nil {
			t.Fatal(err)
		}
		return newPair(t, v, ports[0].Device, ports[0].Port)
	})
}

// TestStatusTextMatchesLibibverbs checks the fake's status strings against
// ibv_wc_status_str, which needs no device.
func TestStatusTextMatchesLibibverbs(t *testing.T) {
	for code := range statusText {
		if got, want := Status(code).String(), verbs.StatusString(code); got != want {
			t.Errorf("status %d: fake says %q, libibverbs %q", code, got, want)
		}
	}
}
