package rdma

import (
	"sort"
	"strconv"

	"github.com/Mellanox/rdmamap"

	"github.com/ringo-ccl/ringo/internal/env"
)

var envHCA = env.Var{Name: "IB_HCA", NCCL: true}

// Ports lists the RDMA device ports sysfs shows (through rdmamap), devices
// sorted by name, ports ascending. It does not open them: a listed port may
// still be down.
func Ports() []Port {
	devs := rdmamap.GetRdmaDeviceList()
	sort.Strings(devs)
	var out []Port
	for _, d := range devs {
		var ports []int
		for _, s := range rdmamap.GetPorts(d) {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				ports = append(ports, n)
			}
		}
		sort.Ints(ports)
		for _, n := range ports {
			out = append(out, Port{Device: d, Port: n})
		}
	}
	return out
}

// SelectPorts returns the ports to use: those Ports lists that
// RINGO_IB_HCA / NCCL_IB_HCA allows (every port when it is unset). Its
// errors wrap ErrNoDevice (nothing found) or errs.ErrInvalidArgument (a bad
// or unmatched NCCL_IB_HCA).
func SelectPorts() ([]Port, error) {
	value, name, _ := envHCA.Lookup()
	if name == "" {
		name = "NCCL_IB_HCA"
	}
	spec, err := ParseHCA(name, value)
	if err != nil {
		return nil, err
	}
	return spec.Select(name, value, Ports())
}
