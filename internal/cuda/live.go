package cuda

import "sync/atomic"

// Live counts the driver resources this process holds through the package,
// by kind: what Alloc, AllocShared, AllocMapped, OpenIPC and ImportShared
// (both IPC), RegisterHost, NewStream, NewEvent and NewMarker made and
// their releases have not undone. Leak checks compare it before a
// communicator is made and after it is closed (a failed release still
// counts as held). Without the cuda tag it stays zero.
type Live struct {
	Allocs, Shared, Mapped, IPC, Registered, Streams, Events int64
}

var live struct {
	allocs, shared, mapped, ipc, registered, streams, events atomic.Int64
}

// Outstanding returns what the process holds now.
func Outstanding() Live {
	return Live{
		Allocs: live.allocs.Load(), Shared: live.shared.Load(), Mapped: live.mapped.Load(), IPC: live.ipc.Load(),
		Registered: live.registered.Load(), Streams: live.streams.Load(), Events: live.events.Load(),
	}
}

// held adds delta to n when err is nil (the call it reports succeeded),
// and returns err.
func held(n *atomic.Int64, err error, delta int64) error {
	if err == nil {
		n.Add(delta)
	}
	return err
}
