package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// tcpMain is "ringo tcp": raw TCP throughput over loopback, both ways at
// once, streams sockets each way — the anchor for the socket transport on
// machines without iperf3 (whose 3.12 is single-threaded besides). A
// 2-rank ring moves one buffer each way per all-reduce, so its busbw
// compares with the slower direction here.
func tcpMain(args []string) error {
	fs := flag.NewFlagSet("tcp", flag.ContinueOnError)
	streams := fs.Int("streams", 4, "TCP connections each way")
	dur := fs.Duration("t", 5*time.Second, "how long to send")
	chunk := fs.Int("chunk", 1<<20, "bytes per write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *streams < 1 || *streams > 256 || *chunk < 1 || *dur <= 0 {
		return fmt.Errorf("tcp: -streams %d (1…256), -chunk %d (> 0), -t %v (> 0)", *streams, *chunk, *dur)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	var got [2]atomic.Int64 // bytes received, by direction
	var wg sync.WaitGroup
	errc := make(chan error, 4*(*streams))
	stop := time.Now().Add(*dur)
	// Direction 0 is dialer → acceptor, 1 acceptor → dialer, on separate
	// connections.
	for dir := range 2 {
		for range *streams {
			a, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				return err
			}
			b, err := ln.Accept()
			if err != nil {
				return err
			}
			src, dst := a, b
			if dir == 1 {
				src, dst = b, a
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer src.Close()
				buf := make([]byte, *chunk)
				for time.Now().Before(stop) {
					if _, err := src.Write(buf); err != nil {
						errc <- err
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				buf := make([]byte, *chunk)
				for {
					n, err := dst.Read(buf)
					if time.Now().Before(stop) {
						got[dir].Add(int64(n))
					}
					if err != nil {
						if !errors.Is(err, io.EOF) {
							errc <- err
						}
						return
					}
				}
			}()
		}
	}
	start := time.Now()
	wg.Wait()
	el := min(time.Since(start), *dur).Seconds()
	close(errc)
	for err := range errc {
		return err
	}
	a, b := float64(got[0].Load())/el/1e9, float64(got[1].Load())/el/1e9
	fmt.Printf("# raw TCP over loopback, %d streams each way at once, %v\n", *streams, *dur)
	fmt.Printf("%-12s %10.2f GB/s\n%-12s %10.2f GB/s\n%-12s %10.2f GB/s\n", "a->b", a, "b->a", b, "slower", min(a, b))
	return nil
}
