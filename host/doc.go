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
// Lifecycle hazards: an Executor runs one plan at a time; connection step
// counters persist across plans, so every rank of a communicator must run the
// same sequence of plans. After a failed Run the connections are in an
// unknown state and the Executor must not run again.
package host
