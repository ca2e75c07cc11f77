// Package bench is ringo's benchmark harness: it sweeps message sizes for
// one or more collectives and prints nccl-tests' table — size, count, type,
// redop, root, then time, algbw, busbw and #wrong out of place and in place —
// so ringo's figures can be read beside NCCL's line by line. What it times
// (Coll) is a ring collective, or one of nccl-tests' point-to-point tests
// (sendrecv, alltoall, gather, scatter) run through the library's
// point-to-point calls.
//
// Every rank runs the same loop (RunRank) through its own Comm, and the
// ranks agree on timings and error counts through the communicator itself,
// so the loop is the same whether the ranks are goroutines of one process or
// separate processes. Correctness is checked on data built so that every
// result is exactly representable whatever the reduction order (as
// nccl-tests' verifiable data is), and compared bit for bit; floating-point
// Avg, which rounds a 1/n scalar, is compared within a few ulps.
package bench
