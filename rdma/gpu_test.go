package rdma_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/rdma"
	"github.com/ringo-ccl/ringo/rdma/rdmatest"
)

func TestRegisterGPU(t *testing.T) {
	closed := 0
	exporter := func(addr uint64, n int) (rdma.DmabufExport, error) {
		return rdma.DmabufExport{FD: 42, Offset: addr & 0xffff, Close: func() error { closed++; return nil }}, nil
	}
	noExport := func(uint64, int) (rdma.DmabufExport, error) {
		return rdma.DmabufExport{}, errors.New("cuMemGetHandleForAddressRange: " + errs.ErrNotSupported.Error())
	}
	for _, c := range []struct {
		name    string
		support rdmatest.GPUSupport
		export  rdma.ExportFunc
		want    rdma.Strategy
		why     []string
	}{
		{"dma-buf", rdmatest.GPUSupport{Dmabuf: true, PeerMem: true}, exporter, rdma.Dmabuf, []string{"ibv_reg_dmabuf_mr succeeded"}},
		{"peermem when the NIC refuses dma-buf", rdmatest.GPUSupport{PeerMem: true}, exporter, rdma.PeerMem,
			[]string{"dma-buf: fake rdma: ibv_reg_dmabuf_mr", "nvidia-peermem: ibv_reg_mr on the device address succeeded"}},
		{"peermem when the driver cannot export", rdmatest.GPUSupport{Dmabuf: true, PeerMem: true}, noExport, rdma.PeerMem,
			[]string{"dma-buf: export: cuMemGetHandleForAddressRange"}},
		{"peermem without an exporter", rdmatest.GPUSupport{Dmabuf: true, PeerMem: true}, nil, rdma.PeerMem, []string{"no exporter supplied"}},
		{"host staging", rdmatest.GPUSupport{}, exporter, rdma.HostStaging,
			[]string{"dma-buf: fake rdma: ibv_reg_dmabuf_mr", "nvidia-peermem: fake rdma: ibv_reg_mr on device address", "nvidia-peermem not loaded"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := rdmatest.NewFabric()
			f.SetGPUSupport(c.support)
			dev, _ := f.Open("fake0", 1)
			closed = 0
			got, err := rdma.RegisterGPU(dev, 0x7000_0000_1000, 1<<20, rdma.LocalWrite|rdma.RemoteWrite, c.export)
			if err != nil {
				t.Fatal(err)
			}
			if got.Strategy != c.want {
				t.Fatalf("strategy %v (%s), want %v", got.Strategy, got.Why, c.want)
			}
			for _, w := range c.why {
				if !strings.Contains(got.Why, w) {
					t.Errorf("why %q does not say %q", got.Why, w)
				}
			}
			if (got.MR == nil) != (c.want == rdma.HostStaging) {
				t.Errorf("strategy %v with region %v", got.Strategy, got.MR)
			}
			if got.MR != nil {
				if got.MR.Addr() != 0x7000_0000_1000 || got.MR.Len() != 1<<20 {
					t.Errorf("region at %#x+%d", got.MR.Addr(), got.MR.Len())
				}
				got.MR.Close()
			}
			if c.export != nil && c.name != "peermem when the driver cannot export" && closed != 1 {
				t.Errorf("the dma-buf fd was closed %d times, want 1", closed)
			}
		})
	}
	dev, _ := rdmatest.NewFabric().Open("fake0", 1)
	if _, err := rdma.RegisterGPU(dev, 0, 10, 0, nil); err == nil {
		t.Errorf("rdma.RegisterGPU of a null buffer succeeded")
	}
}
