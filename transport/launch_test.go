package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringo-ccl/ringo/internal/errs"
)

var launchVars = []string{
	"RINGO_RANK", "RINGO_NRANKS", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"RINGO_COMM_ID", "NCCL_COMM_ID", "MASTER_ADDR", "MASTER_PORT", "RINGO_SECRET",
}

// clearLaunchEnv empties every launcher variable for the test (empty counts
// as unset).
func clearLaunchEnv(t *testing.T) {
	for _, v := range launchVars {
		t.Setenv(v, "")
	}
}

func TestLaunchFromEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Launch
		ok   bool
		err  string // "" for no error
	}{
		{"nothing", nil, Launch{}, false, ""},
		{"torchrun", map[string]string{"RANK": "3", "WORLD_SIZE": "8", "MASTER_ADDR": "node1", "MASTER_PORT": "29500"},
			Launch{Rank: 3, Size: 8, RootAddr: "node1:29500", Source: "torchrun"}, true, ""},
		{"mpirun", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "NCCL_COMM_ID": "10.0.0.1:4242"},
			Launch{Rank: 0, Size: 2, RootAddr: "10.0.0.1:4242", Source: "mpirun"}, true, ""},
		{"ringo", map[string]string{"RINGO_RANK": "1", "RINGO_NRANKS": "2", "RINGO_COMM_ID": "[fd00::1]:99"},
			Launch{Rank: 1, Size: 2, RootAddr: "[fd00::1]:99", Source: "ringo"}, true, ""},
		{"COMM_ID wins over MASTER_", map[string]string{"RANK": "0", "WORLD_SIZE": "1", "NCCL_COMM_ID": "a:1", "MASTER_ADDR": "b", "MASTER_PORT": "2"},
			Launch{Rank: 0, Size: 1, RootAddr: "a:1", Source: "torchrun"}, true, ""},
		{"RINGO_COMM_ID wins over NCCL_", map[string]string{"RANK": "0", "WORLD_SIZE": "1", "NCCL_COMM_ID": "a:1", "RINGO_COMM_ID": "c:3"},
			Launch{Rank: 0, Size: 1, RootAddr: "c:3", Source: "torchrun"}, true, ""},
		{"RINGO_ rank wins over torchrun's", map[string]string{"RINGO_RANK": "1", "RINGO_NRANKS": "4", "RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"},
			Launch{Rank: 1, Size: 4, RootAddr: "h:1", Source: "ringo"}, true, ""},
		{"rank without size", map[string]string{"RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "1"}, Launch{}, true, "RANK is set but WORLD_SIZE is not"},
		{"size without rank", map[string]string{"OMPI_COMM_WORLD_SIZE": "2"}, Launch{}, true, "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not"},
		{"rank not a number", map[string]string{"RANK": "one", "WORLD_SIZE": "2"}, Launch{}, true, `RANK="one"`},
		{"rank too large", map[string]string{"RANK": "2", "WORLD_SIZE": "2"}, Launch{}, true, `RANK="2" is not a rank in [0, 2)`},
		{"size zero", map[string]string{"RINGO_RANK": "0", "RINGO_NRANKS": "0"}, Launch{}, true, `RINGO_NRANKS="0"`},
		{"no root address", map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, Launch{}, true, "no root address"},
		{"address without port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "NCCL_COMM_ID": "10.0.0.1"}, Launch{}, true, "NCCL_COMM_ID"},
		{"address without host", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "RINGO_COMM_ID": ":4242"}, Launch{}, true, "RINGO_COMM_ID"},
		{"bad port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "http"}, Launch{}, true, `MASTER_PORT="http"`},
		{"port 0", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "0"}, Launch{}, true, "port 0"},
		{"MASTER_ADDR alone", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, Launch{}, true, "MASTER_PORT is not"},
		{"MASTER_PORT alone", map[string]string{"MASTER_PORT": "1"}, Launch{}, true, "MASTER_ADDR is not"},
		{"address but no rank", map[string]string{"NCCL_COMM_ID": "10.0.0.1:4242"}, Launch{}, true, "no rank and size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearLaunchEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			l, ok, err := LaunchFromEnv()
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if c.err == "" {
				if err != nil || l != c.want {
					t.Fatalf("%+v, %v; want %+v", l, err, c.want)
				}
				return
			}
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%v, want an error containing %q", err, c.err)
			}
		})
	}
}

func TestJoinLaunch(t *testing.T) {
	clearLaunchEnv(t)
	addr := reservePort(t).String()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type result struct {
		b   *Bootstrap
		id  UniqueID
		err error
	}
	res := make([]chan result, 3)
	for r := 2; r >= 0; r-- { // rank 0, which starts the root, last
		res[r] = make(chan result, 1)
		go func() {
			b, id, err := JoinLaunch(ctx, Launch{Rank: r, Size: 3, RootAddr: addr, Source: "ringo"})
			res[r] <- result{b, id, err}
		}()
		time.Sleep(20 * time.Millisecond)
	}
	var bs []*Bootstrap
	var ids []UniqueID
	for r := range res {
		got := <-res[r]
		if got.err != nil {
			t.Fatalf("rank %d: %v", r, got.err)
		}
		t.Cleanup(func() { got.b.Close() })
		bs, ids = append(bs, got.b), append(ids, got.id)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || ids[0].Addr() != addr {
		t.Fatalf("the ranks disagree on the ID: %v %v %v", ids[0].Addr(), ids[1].Addr(), ids[2].Addr())
	}
	checkRing(t, bs)

	// The secret follows RINGO_SECRET, else the address and size.
	l := Launch{Size: 3, RootAddr: addr}
	plain := launchSecretFor(l)
	if launchSecretFor(Launch{Size: 4, RootAddr: addr}) == plain {
		t.Error("the size does not enter the secret")
	}
	t.Setenv("RINGO_SECRET", "job-42")
	if s := launchSecretFor(l); s == plain || s != launchSecretFor(Launch{Size: 9, RootAddr: "elsewhere:1"}) {
		t.Error("RINGO_SECRET does not determine the secret")
	}
}

func TestJoinLaunchRejects(t *testing.T) {
	ctx := context.Background()
	for _, l := range []Launch{
		{Rank: 2, Size: 2, RootAddr: "127.0.0.1:1"},
		{Rank: 0, Size: 0, RootAddr: "127.0.0.1:1"},
		{Rank: 0, Size: 2, RootAddr: "127.0.0.1"},
		{Rank: 1, Size: 2, RootAddr: "0.0.0.0:4242"},
	} {
		if _, _, err := JoinLaunch(ctx, l); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", l, err)
		}
	}
}
