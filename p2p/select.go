package p2p

// Transport is how a GPU rank in its own process reaches its ring
// neighbours, in NCCL's order of preference (selectTransport): its GPU
// reaching theirs (CUDA IPC), host shared memory registered with CUDA, the
// network.
type Transport int

const (
	None Transport = iota // a ring of one: no neighbour
	IPC                   // every pair of neighbours has peer access, on one host
	SHM                   // one host, shared memory on (NCCL_SHM_DISABLE unset)
	Net                   // the net transport's proxies (network.Start)
)

func (t Transport) String() string {
	switch t {
	case None:
		return "none"
	case IPC:
		return "P2P/IPC"
	case SHM:
		return "SHM/direct"
	case Net:
		return "NET"
	}
	return "Transport(?)"
}

// Choice is what Select decides for every rank of a communicator alike.
type Choice struct {
	Transport Transport
	// LL128Unsafe says why LL128 may not be safe on some ring link, naming
	// the rank ("" where it is on every link).
	LL128Unsafe string
	// HostMemory: the connections' FIFOs are in host memory (shared memory
	// or the network), where LL128 cannot run.
	HostMemory bool
	// AnyPeer: every rank's GPU reaches every other's (for connections
	// off the ring through CUDA IPC).
	AnyPeer bool
}

// choose is the transport of a ring of n ranks, as NCCL tries them: P2P
// (allP2P: every rank reaches its successor's GPU) when every rank is on
// one host, then shared memory unless shmOff, then the network.
func choose(n int, allP2P, oneHost, shmOff bool) Choice {
	c := Choice{HostMemory: n > 1 && !(allP2P && oneHost)}
	switch {
	case n == 1:
		c.Transport = None
	case allP2P && oneHost:
		c.Transport = IPC
	case oneHost && !shmOff:
		c.Transport = SHM
	default:
		c.Transport = Net
	}
	return c
}
