// Package hier makes and holds a rank's part in the hierarchical variant
// (ring.Hierarchy): the communicators of its group and of its column, and
// its place in the group. It is generic over the sub-communicator (the
// root's Comm; a fake in tests), of which it needs only Close, Abort and Err.
//
// Make splits a communicator's ranks of this process into their groups,
// then their columns, with a Maker: Local makes each part's ranks together
// in this process (NewLocal, NewLocalGPUs); Split makes a rank's part in
// its own process as ncclCommSplit does (a rendezvous over the parent's
// bootstrap, then the rank's own communicator), the ranks failing together
// when one could not make its part. A failure names the group or column.
//
// Which calls run hierarchically (Part.Covers) and how a call's elements
// fall into the phases (Part.Segments) are here too; the root runs the
// phases, on host buffers or device pointers.
//
// Life cycle: Make either returns every part made or closes all it made;
// each Part is then its parent rank's, closed by the parent's Close (Abort
// and Err reach its sub-communicators too).
package hier
