// Package bootstrap is ringo's control plane: how the ranks of a
// communicator find each other before any data moves, and how they learn
// that one of them died. It is NCCL's src/bootstrap.cc in Go, and like it
// knows nothing of FIFOs or transports: package transport needs of it only
// a transport.Exchanger, which *Bootstrap and *PairExchanger implement
// (checked in the tests: package transport's own tests import this one, so
// this one imports nothing of transport).
//
// A UniqueID (uniqueid.go) names a communicator: its root's address and a
// random secret. The root (root.go) is where the ranks meet: each connects
// and says hello; once all have, the root sends every rank the table of
// the ranks' listener addresses, and each rank connects to its successor,
// whose listener (listen.go) takes it as its predecessor (ring.go).
// AllGather and Barrier then run around that ring (gather.go); every
// message is a frame (frame.go). The root stays: a rank's connection to it
// closing without a goodbye is a lost rank, reported to all (PeerLost),
// and a stalled rank can ask where every other one is (Query,
// progress.go). A job started by a launcher — torchrun, mpirun, srun —
// finds its rank, size and root in the environment (LaunchFromEnv,
// launch.go) and joins with JoinLaunch. The TCP helpers it shares with the
// socket wire (dial with retry, deadlines, interface choice) are package
// internal/tcp's.
//
// Which ranks are gone, the bootstrap keeps (Lost, liveness.go): those the
// root reported, those that lived in the root's process when the root is
// lost (the root names them to every rank, after the table), and those
// whose listener refuses a connection. Revoke (revoke.go) tells every
// other rank over the point-to-point connections below, so that it needs
// no root; the survivors of a loss then agree on their next communicator
// over the same connections (package internal/peers, Shrink).
//
// Two ranks also talk alone, as NCCL's bootstrapSend and bootstrapRecv do
// (p2p.go): Send and Recv move tagged messages (at most MaxMessage bytes,
// tags up to MaxTag) between this rank and a peer, in order per peer and
// tag, without the other ranks. A pair has one TCP connection, made on its
// first Send: the sender dials the peer's listener, the address from the
// table, and proves the secret in a p2p hello, as a ring hello does. Recv
// never dials. When both ranks dial at once, the lower rank's connection
// is kept and the higher one's refused. Pair wraps Send and Recv in a
// transport.Exchanger of the two ranks, on a tag above MaxTag, reserved.
//
// # Lifecycle hazards
//
//   - The root runs as goroutines of the process that made the ID
//     (NewUniqueID, StartRoot, or rank 0 of JoinLaunch) until every rank
//     that joined has closed or been lost, or StopRoot (StopRootIdle: only
//     if no rank joined). When it is lost, the ranks of its process count
//     as lost: a process whose ranks live on must not stop a root they
//     use. That process must
//     outlive the others' setup: when it exits, every rank sees the root
//     lost. The Close of a rank in the root's process therefore waits, up to
//     10 s, for the ranks of other processes to leave.
//   - Join returns only when all ranks have joined, or ctx ends, or a rank
//     that joined died: every rank must call it, and a rank that never does
//     holds the others until their ctx ends (the error names it).
//   - AllGather and Barrier are collective: every rank makes the same calls
//     in the same order. A call that fails (a mismatch, a timeout, a loss)
//     leaves the ring out of step, and every later call fails too: a
//     communicator whose bootstrap failed is to be closed, not retried.
//   - Send and Recv are no collective: any rank may call them at any time
//     after Join. Send returns once its message is written, not received;
//     the receiver keeps what no Recv has taken yet, up to 1024 messages and
//     4 MiB a peer, beyond which it drops the connection. A pair whose
//     connection fails — the peer closed or died (the root's report or the
//     socket, whichever comes first), a malformed or overflowing message, a
//     Send cut off mid-message by its ctx — stays failed: its later calls
//     fail (ErrPeerLost for a peer gone), after Recv has taken what arrived
//     before; other pairs go on. A Recv from a peer that never sends, and
//     is not lost, waits for its ctx: a rank that Closes before ever
//     connecting looks to its peers like one that is silent, and a Send to
//     it fails after 30 s of dialing.
//   - Pair's calls are collective for its two ranks, with AllGather's
//     hazards: same calls, same order, and a failed one breaks the pair's
//     later ones (not its Send and Recv).
//   - PeerLost delivers the first loss once, then is closed; Close closes it
//     without a value. Close ends any call in progress with errs.ErrAborted,
//     is idempotent, and no goroutine of the Bootstrap outlives it.
//   - Whoever holds a UniqueID can join its communicator: hand it only to
//     its ranks. JoinLaunch derives the secret from RINGO_SECRET, or else
//     from the root's address and the size, which keeps apart jobs that
//     reuse an address by accident but keeps out no one who can reach the
//     port.
//   - Listeners (the root, every rank's, which listens from Join to Close)
//     admit only connections that prove the secret in a fixed-size hello,
//     and vet a bounded number at once, each for a bounded time (gate.go):
//     a flood of strangers delays a job but does not grow the process. A
//     member's frame is checked against the largest of its type before it
//     is read.
package bootstrap
