// Package host is ringo's host executor: it runs one rank's ring plan
// (package ring) over host memory, moving data through the rank's
// connections (package transport) with the Simple or LL protocol and
// combining it with a reduction (package reduce).
//
// An Executor belongs to one rank. Each channel of a plan runs on its own
// goroutine — channel 0 on the caller's, the others on worker goroutines the
// Executor starts on first use and stops in Close — so a rank reduces slice k
// of one channel while slice k+1 is still in flight and other channels move
// other ranges. Running a plan does not allocate.
//
// Point-to-point plans (ring.NewP2P) run like any other: their SendRecv
// steps move slice k of the send half (credit, copy from the input, post),
// then slice k of the receive half (data, copy to the output, head), so a
// send never waits for a receive; Send, Recv and Copy steps are the
// collectives'. A group's messages may each sit in a buffer of its own:
// Job.InSegs and OutSegs stand for the input and output, the plan's
// offsets indexing the segments laid end to end.
//
// Collectives of ranks that are processes of one host may skip the plan:
// RunOneShot runs small ones in one exchange over the communicator's
// shm.Board; RunWindowed larger ones whose buffers lie in windows every
// rank mapped (ringo.RegisterHostWindow), reading and writing the peers'
// buffers in place, or reports that some rank's do not, which every rank
// learns alike; RunTwoShot all-reduces up to a MiB in rounds over the
// board where the host's ranks outnumber its cores; RunDirect larger ones
// by reading the peers' buffers (shm.Attach), meeting on the board.
//
// Lifecycle hazards: an Executor runs one plan at a time; connection step
// counters persist across plans, so every rank of a communicator must run
// the same sequence of plans — for point-to-point plans, the two ends of
// each connection the same sequence of messages, as ring.NewP2P's matching
// gives when the ranks issue matching sends and receives (of one protocol:
// a connection's Simple steps stay aligned only so). After a failed Run
// the connections are in an unknown state and the Executor must not run
// again.
package host
