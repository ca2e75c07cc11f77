// Package network is the net transport: which wire carries the
// connections between ranks that share no memory — RDMA when every rank
// has a usable port and NCCL_NET allows, else sockets — and the start of
// its proxies (transport.Net) over them. NCCL's src/transport/net.cc.
//
// Start connects a given set of connection ends, each in memory the
// caller laid out (a GPU rank's views of host memory registered with
// CUDA); Connector is the transport.Connector that host ranks' meshes use,
// making each connection in memory of its own. Both are collective: every
// rank of the communicator calls them at the same time, as each exchanges
// addresses or RDMA handles through the control plane.
//
// Lifecycle: the proxies run until the Net (or the Connector) is closed;
// a broken connection is reported once through the fail function given,
// and the caller's abort ends every wait on the wires.
package network
