//go:build ibverbs

package rdma_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ringo-ccl/ringo/rdma"
)

// TestVerbsWire runs the fake's wire test over the first selected RDMA
// port, both ends on it (a loopback connection through the NIC).
func TestVerbsWire(t *testing.T) {
	if len(rdma.Ports()) == 0 {
		t.Skip("no RDMA device found (rdmamap lists none): the verbs transport has not run on RDMA hardware here")
	}
	ports, err := rdma.SelectPorts()
	if err != nil {
		t.Fatal(err)
	}
	v, err := rdma.NewVerbs()
	if err != nil {
		t.Fatal(err)
	}
	w := newPair(t, v, ports[0].Device, ports[0].Port)
	runPosts(t, w, planPosts(2000, rand.New(rand.NewPCG(3, 4))))
}

func TestVerbsHotPathDoesNotAllocate(t *testing.T) {
	if len(rdma.Ports()) == 0 {
		t.Skip("no RDMA device found (rdmamap lists none): the verbs transport has not run on RDMA hardware here")
	}
	// The fake's test exercises the same wire code; here the provider is
	// the verbs one.
	testHotPath(t, func(t testing.TB) *wirePair {
		ports, err := rdma.SelectPorts()
		if err != nil {
			t.Fatal(err)
		}
		v, err := rdma.NewVerbs()
		if err != nil {
			t.Fatal(err)
		}
		return newPair(t, v, ports[0].Device, ports[0].Port)
	})
}
