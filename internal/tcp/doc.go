// Package tcp holds the TCP helpers that ringo's control plane (package
// bootstrap: the root, the ring of ranks) and its data plane (package
// transport's socket wire) share, as NCCL's src/misc/socket.cc serves both
// its bootstrap and its socket transport:
//
//   - which interface and address to listen on (Interfaces, ListenIP,
//     honouring NCCL_SOCKET_IFNAME);
//   - dialing with retry until a context ends (Dial), and tuning a
//     connection so that a dead host is noticed within seconds (Tune);
//   - binding a connection's deadlines to a context (Bind) and saying why a
//     context ended (Ended, EndedBy);
//   - addresses: "host:port" parsing and resolution (SplitHostPort,
//     ResolveHost) and the 18-byte wire form (AppendAddr, DecodeAddr).
//
// It knows nothing of frames, ranks or FIFOs. Every function is safe for
// concurrent use.
package tcp
