//go:build ibverbs

package verbs

import "testing"

// TestDevices lists devices through libibverbs and, where there is one,
// opens it and queries port 1. Without RDMA hardware it only proves that
// the binding links and that an empty list is not an error.
func TestDevices(t *testing.T) {
	names, err := DeviceNames()
	if err != nil {
		t.Skipf("ibv_get_device_list: %v: the verbs binding has not run on RDMA hardware here", err)
	}
	if len(names) == 0 {
		t.Skip("no RDMA device found (libibverbs lists none): the verbs binding has not run on RDMA hardware here")
	}
	c, err := Open(names[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := c.QueryPort(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:1 %v, %v link, lid %d, mtu %v, %d GIDs", names[0], a.State, a.LinkLayer, a.LID, a.ActiveMTU, a.GIDTblLen)
	gids, err := c.GIDs(1, a.GIDTblLen)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gids {
		t.Logf("gid %d %v % x", g.Index, g.Type, g.GID)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Dealloc()
	buf := make([]byte, 4096)
	mr, err := pd.RegHost(buf, AccessLocalWrite|AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Dereg(); err != nil {
		t.Fatal(err)
	}
	if StatusString(5) != "Work Request Flushed Error" {
		t.Errorf("ibv_wc_status_str(5) = %q", StatusString(5))
	}
}

func TestStatusString(t *testing.T) {
	// ibv_wc_status_str needs no device.
	for code, want := range map[int]string{0: "success", 5: "Work Request Flushed Error", 12: "transport retry counter exceeded", 13: "RNR retry counter exceeded"} {
		if got := StatusString(code); got != want {
			t.Errorf("StatusString(%d) = %q, want %q", code, got, want)
		}
	}
}
