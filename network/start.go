package network

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/transport"
)

// End is this rank's end of one net connection: its edge (from or to this
// rank), the Conn its executor uses and the memory the Conn lies in (one
// block per connection, which an RDMA wire registers; the sender's block
// mirrors the receiver's, so both have the same Sizes).
type End struct {
	Edge transport.Edge
	Conn *transport.Conn
	Mem  []byte
}

// Ends returns rank's ends of edges — those it sends or receives on, in
// the order of edges — each a connection of sizes s in memory of its own
// (transport.NetMem).
func Ends(rank int, edges []transport.Edge, s transport.Sizes) ([]End, error) {
	var mine []transport.Edge
	for _, e := range edges {
		if e.From == rank || e.To == rank {
			mine = append(mine, e)
		}
	}
	mem := transport.NetMem(len(mine), s)
	conns, err := transport.NetConns(mem, s)
	if err != nil {
		return nil, err
	}
	ends := make([]End, len(mine))
	for i, e := range mine {
		ends[i] = End{Edge: e, Conn: conns[i], Mem: mem[i]}
	}
	return ends, nil
}

// Net is one rank's net connections started by Start: their proxies, and
// what their wires share, released after them.
type Net struct {
	*transport.Net
	wires *rdma.Wires // nil over sockets
}

// Close stops the proxies, closes the wires (each says goodbye to its
// peer) and releases what they share.
func (n *Net) Close() error {
	err := n.Net.Close()
	if n.wires != nil {
		err = errors.Join(err, n.wires.Close())
	}
	return err
}

// Start connects this rank's (ex.Rank()) net connections ends over RDMA
// or sockets — whichever every rank can use, and NCCL_NET allows — and
// starts their proxies. Every rank of the communicator calls it at the
// same time, each with its own ends (a rank with none takes part in the
// exchanges only). The proxies report a broken connection to fail, naming
// its peer and channel; abort (may be nil) ends the wires' waits. It
// returns the connections, and the wire's name for NCCL_DEBUG ("Socket",
// "IB/mlx5_0:1").
func Start(ctx context.Context, ex transport.Exchanger, ends []End, sizes transport.Sizes, fail func(error), abort *transport.Abort) (*Net, string, error) {
	w, err := choose(ctx, ex)
	if err != nil {
		return nil, "", err
	}
	n, err := w.start(ctx, ex, ends, sizes, fail, abort)
	if err != nil {
		return nil, "", err
	}
	return n, w.name(), nil
}

// start connects ends over w and starts their proxies.
func (w wire) start(ctx context.Context, ex transport.Exchanger, ends []End, sizes transport.Sizes, fail func(error), abort *transport.Abort) (*Net, error) {
	rank := ex.Rank()
	var sends, recvs []transport.Edge
	var sendMem, recvMem [][]byte
	var sendEnds, recvEnds []End
	for _, e := range ends {
		switch {
		case e.Conn == nil:
			return nil, fmt.Errorf("net: rank %d: the connection %v has no Conn", rank, e.Edge)
		case e.Edge.From == rank:
			sends, sendMem, sendEnds = append(sends, e.Edge), append(sendMem, e.Mem), append(sendEnds, e)
		case e.Edge.To == rank:
			recvs, recvMem, recvEnds = append(recvs, e.Edge), append(recvMem, e.Mem), append(recvEnds, e)
		default:
			return nil, fmt.Errorf("net: rank %d given the connection %v, not its own", rank, e.Edge)
		}
	}
	var sw []transport.SendWire
	var rw []transport.RecvWire
	var wires *rdma.Wires
	if w.ib {
		var err error
		if wires, err = rdma.Connect(ctx, ex, w.prov, w.port, sends, recvs, sizes, sendMem, recvMem, abort); err != nil {
			return nil, err
		}
		sw, rw = wires.Sends, wires.Recvs
	} else {
		nsock, err := transport.SocketsPerConn()
		if err != nil {
			return nil, err
		}
		if sw, rw, err = transport.ConnectSockets(ctx, ex, sends, recvs, nsock); err != nil {
			return nil, err
		}
	}
	var nends []transport.NetEnd
	for i, e := range sendEnds {
		nends = append(nends, transport.NetEnd{Edge: e.Edge, Conn: e.Conn, Send: sw[i]})
	}
	for i, e := range recvEnds {
		nends = append(nends, transport.NetEnd{Edge: e.Edge, Conn: e.Conn, Recv: rw[i]})
	}
	nt, err := transport.NewNet(rank, nends, fail, abort)
	if err != nil {
		for _, x := range sw {
			x.Close()
		}
		for _, x := range rw {
			x.Close()
		}
		if wires != nil {
			err = errors.Join(err, wires.Close())
		}
		return nil, err
	}
	return &Net{Net: nt, wires: wires}, nil
}
