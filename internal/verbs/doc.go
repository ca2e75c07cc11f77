// Package verbs is ringo's thin binding to libibverbs, the only code in the
// module that includes <infiniband/verbs.h>. It opens a device by name,
// queries a port and its GID table, allocates a protection domain, registers
// memory (ibv_reg_mr on an address, which covers host memory and GPU memory
// through nvidia-peermem, and ibv_reg_dmabuf_mr on a dma-buf), creates
// completion queues and reliable-connected queue pairs, walks a queue pair
// through INIT → RTR → RTS, posts RDMA WRITE, RDMA WRITE WITH IMM and
// zero-length receives, and polls completions. The protocol that uses these
// lives in package rdma, which knows nothing of C.
//
// The binding is compiled only with the build tag ibverbs (cgo, -libverbs,
// Debian's libibverbs-dev). Without the tag every function returns an error
// wrapping errs.ErrNotSupported, so the module builds and tests on machines
// without the library.
//
// Memory: addresses handed to Reg* are integers. The caller keeps the memory
// alive and unmoved until the region is deregistered; nothing here retains a
// Go pointer in C. Work requests are built on the C stack inside one cgo call
// per post, and completions are polled into arrays allocated in C, so the
// posting and polling paths do not allocate in Go.
//
// Concurrency: ibverbs objects are thread-safe for posting and polling, but
// a Destroy/Close must not race with any other use of the same object (or of
// objects created from it); callers order teardown after their pollers stop.
//
// Hardware status: this binding compiles and links against rdma-core 44 but
// has not run on an RDMA device here; no machine it was developed on had one.
package verbs
