// Package rdma is ringo's InfiniBand / RoCE transport: transport.SendWire
// and transport.RecvWire over reliable-connected queue pairs, after NCCL's
// IB transport, in pure Go against a Provider interface. Two providers
// exist: the verbs one (build tag ibverbs; the only C is in
// internal/verbs) and, for tests only, package rdmatest's Fabric, an
// in-process fake that simulates RC queue pairs — rkey, bounds and access
// checks, RNR, flushes, dead peers — so the protocol is tested under -race
// on any machine.
//
// # Discovery
//
// Ports lists the device ports sysfs shows (github.com/Mellanox/rdmamap);
// SelectPorts filters them with NCCL_IB_HCA (or RINGO_IB_HCA) in NCCL's
// syntax, parsed by the pure ParseHCA: "mlx5_0:1,mlx5_1" (prefixes, any
// port unless given), "=mlx5_1" (exact names), "^mlx5_1" (all but),
// "^=mlx5_1". NCCL_IB_GID_INDEX picks the GID; by default PickGID takes a
// RoCEv2 IPv4 GID, else a RoCEv2 one, else the first non-zero one.
// NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT, NCCL_IB_SL and NCCL_IB_TC set the
// queue pair's attributes.
//
// # The protocol
//
// Each end of a connection registers its connection memory (the region a
// transport.Conn lies in — transport.NewConn's block for host ranks, a
// channel's part of a GPU rank's host-mapped region for GPU ranks — at
// least transport.Sizes.Bytes() bytes, with the same layout and length at
// both ends) and a small control region of its own:
//
//	header ring  NSteps × 32 bytes   receiver: written by the sender, one entry per FIFO step mod NSteps
//	header src   16 × 32 bytes       sender: headers being written
//	credit word  8 bytes             sender: the receiver's head, written by the receiver
//	credit src   16 × 8 bytes        receiver: heads being written
//
// Connect sets up a rank's wires, every rank at once, through the
// bootstrap; transport.Net's proxies then drive them.
//
// Setup: NewSender / NewReceiver register memory, create the queue pair
// (INIT) with a send and a receive completion queue, and post receives;
// Blob returns {QPN, PSN, LID, GID, MTU, connection and control
// addresses and rkeys, sizes}, which the caller ships through the
// bootstrap; Connect takes the peer's blob and moves the queue pair to RTR
// and RTS.
//
// Send(p, data): an RDMA WRITE of data to the same offset in the
// receiver's connection memory (unsignaled), then an RDMA WRITE WITH IMM of
// the 32-byte post header (step, bytes, data offset, skip, slots, proto,
// version 2, flags, the data's CRC-32C under RINGO_CHECK=1, the header's
// CRC-32C; header.go has the layout) into the receiver's header ring; the
// immediate is the step's low 32 bits. RC executes the two in order, so
// the data is in place when the header's completion is seen. Send returns
// once both are posted; it waits only when 16 posts are unacknowledged.
//
// Recv(place): waits for the header's receive completion, re-posts the
// receive, takes the header out of the ring (clearing the entry), and
// checks it: checksum, version and reserved bits, the immediate, continuity
// (a post's Step is the previous Step+Slots, starting at 0), and that the
// data lies inside the connection memory; when the header carries a data
// checksum (the sender had RINGO_CHECK=1, whatever the receiver's), the
// data in the connection memory must match it. A bad header or corrupted
// data is an error naming the post, and no data is returned. place says
// where the data goes: when that is exactly its region of the connection
// memory nothing moves; otherwise (a staging buffer) it is copied there.
//
// Credits: SendCredit(head) writes head with immediate into the sender's
// credit word (heads not above the last reported are not sent); Credit
// waits for that completion and returns the head, taken from the immediate
// (which cannot tear) and extended to 64 bits. Receives are kept posted
// ahead (32 per queue pair, far more than credits let be in flight), so a
// write with immediate never meets RNR.
//
// The posting and polling paths do not allocate (work requests, headers
// and completion arrays are preallocated); TestHotPathDoesNotAllocate
// checks it. A completion with an error status becomes an error naming the
// peer rank, channel, device port, both queue pair numbers and the status
// text; retry-exceeded statuses wrap errs.ErrPeerLost.
//
// GPU memory: RegisterGPU chooses ibv_reg_dmabuf_mr on a dma-buf from a
// caller-supplied exporter (cuMemGetHandleForAddressRange), else
// ibv_reg_mr on the device address (nvidia-peermem), else host staging,
// and says why.
//
// # Concurrency and lifetime
//
// Send and Credit may run on two goroutines, as may Recv and SendCredit;
// each completion queue is polled by only one of them. Close makes blocked
// calls return ErrClosed, waits for them, then destroys the queue pair,
// completion queues and registrations; the caller closes the Device after
// its wires, and keeps the connection memory alive until Close.
//
// # Hardware status
//
// Everything here has run against the fake only. The verbs provider and
// internal/verbs compile and link against rdma-core 44 (libibverbs-dev),
// but no machine this was written on has an RDMA device, so the verbs
// path has not run on hardware; the ibverbs-tagged tests skip with a
// message saying so. The wire registers host memory only — GPU ranks' FIFOs
// are staged in host memory registered with CUDA; a GPU-resident FIFO
// (GPUDirect) needs the region from RegisterGPU passed in, which is not
// wired up yet.
package rdma
