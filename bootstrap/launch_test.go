package bootstrap

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringo-ccl/ringo/internal/errs"
)

var launchVars = []string{
	"RINGO_RANK", "RINGO_NRANKS", "RANK", "WORLD_SIZE", "LOCAL_RANK",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
	"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
	"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEPID",
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
	"RINGO_COMM_ID", "NCCL_COMM_ID", "MASTER_ADDR", "MASTER_PORT", "RINGO_SECRET",
}

// clearLaunchEnv empties every launcher variable for the test (empty counts
// as unset).
func clearLaunchEnv(t *testing.T) {
	for _, v := range launchVars {
		t.Setenv(v, "")
	}
}

// vars merges variable sets.
func vars(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

func TestLaunchFromEnv(t *testing.T) {
	// What launchers set, with a root address where they set none.
	var (
		master   = map[string]string{"MASTER_ADDR": "node1", "MASTER_PORT": "29500"}
		commID   = map[string]string{"NCCL_COMM_ID": "10.0.0.1:4242"}
		torchrun = map[string]string{"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}
		openmpi  = map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0"}
		mvapich2 = map[string]string{"MV2_COMM_WORLD_RANK": "3", "MV2_COMM_WORLD_SIZE": "6", "MV2_COMM_WORLD_LOCAL_RANK": "1"}
		mpich    = map[string]string{"PMI_RANK": "1", "PMI_SIZE": "3", "MPI_LOCALRANKID": "1"}
		// A task of srun step 3 of job 4242: the root is the step's
		// first node, port 12000 + 20·242 + 3.
		slurm = map[string]string{"SLURM_PROCID": "6", "SLURM_NTASKS": "7", "SLURM_LOCALID": "2",
			"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "3", "SLURM_STEP_NODELIST": "node[07-09],gpu5", "SLURM_JOB_NODELIST": "node[01-09],gpu5"}
		// A batch script of the same job: not a rank.
		slurmBatch = map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "7", "SLURM_LOCALID": "0", "SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "node[01-09],gpu5"}
	)
	cases := []struct {
		name string
		env  map[string]string
		want Launch
		ok   bool
		err  string // "" for no error
	}{
		{"nothing", nil, Launch{}, false, ""},

		// Each source.
		{"ringo", map[string]string{"RINGO_RANK": "1", "RINGO_NRANKS": "2", "RINGO_COMM_ID": "[fd00::1]:99"},
			Launch{Rank: 1, Size: 2, LocalRank: -1, RootAddr: "[fd00::1]:99", Source: "ringo"}, true, ""},
		{"torchrun", vars(torchrun, master), Launch{Rank: 5, Size: 8, LocalRank: 1, RootAddr: "node1:29500", Source: "torchrun"}, true, ""},
		{"torchrun without LOCAL_RANK", map[string]string{"RANK": "3", "WORLD_SIZE": "8", "MASTER_ADDR": "node1", "MASTER_PORT": "29500"},
			Launch{Rank: 3, Size: 8, LocalRank: -1, RootAddr: "node1:29500", Source: "torchrun"}, true, ""},
		{"openmpi", vars(openmpi, commID), Launch{Rank: 2, Size: 4, LocalRank: 0, RootAddr: "10.0.0.1:4242", Source: "openmpi"}, true, ""},
		{"mvapich2", vars(mvapich2, commID), Launch{Rank: 3, Size: 6, LocalRank: 1, RootAddr: "10.0.0.1:4242", Source: "mvapich2"}, true, ""},
		{"mpich", vars(mpich, commID), Launch{Rank: 1, Size: 3, LocalRank: 1, RootAddr: "10.0.0.1:4242", Source: "mpich"}, true, ""},
		{"slurm", slurm, Launch{Rank: 6, Size: 7, LocalRank: 2, RootAddr: "node07:16843", Source: "slurm"}, true, ""},
		{"slurm, job nodelist", vars(slurm, map[string]string{"SLURM_STEP_NODELIST": "", "SLURM_JOB_ID": "1999"}),
			Launch{Rank: 6, Size: 7, LocalRank: 2, RootAddr: "node01:31983", Source: "slurm"}, true, ""},
		{"slurm, old step spelling", vars(slurm, map[string]string{"SLURM_STEP_ID": "", "SLURM_STEPID": "0"}),
			Launch{Rank: 6, Size: 7, LocalRank: 2, RootAddr: "node07:16840", Source: "slurm"}, true, ""},
		{"slurm, NCCL_COMM_ID", vars(slurm, commID), Launch{Rank: 6, Size: 7, LocalRank: 2, RootAddr: "10.0.0.1:4242", Source: "slurm"}, true, ""},
		{"slurm, MASTER_", vars(slurm, master), Launch{Rank: 6, Size: 7, LocalRank: 2, RootAddr: "node1:29500", Source: "slurm"}, true, ""},
		{"slurm batch script", slurmBatch, Launch{}, false, ""},

		// Precedence.
		{"RINGO_ over torchrun", vars(torchrun, master, map[string]string{"RINGO_RANK": "1", "RINGO_NRANKS": "4"}),
			Launch{Rank: 1, Size: 4, LocalRank: -1, RootAddr: "node1:29500", Source: "ringo"}, true, ""},
		{"torchrun in an srun step", vars(slurm, torchrun, master), Launch{Rank: 5, Size: 8, LocalRank: 1, RootAddr: "node1:29500", Source: "torchrun"}, true, ""},
		{"torchrun in an srun step, root from the nodelist", vars(slurm, torchrun),
			Launch{Rank: 5, Size: 8, LocalRank: 1, RootAddr: "node07:16843", Source: "torchrun"}, true, ""},
		{"torchrun under mpirun", vars(openmpi, torchrun, master), Launch{Rank: 5, Size: 8, LocalRank: 1, RootAddr: "node1:29500", Source: "torchrun"}, true, ""},
		{"mpirun in a Slurm allocation", vars(slurm, openmpi, commID), Launch{Rank: 2, Size: 4, LocalRank: 0, RootAddr: "10.0.0.1:4242", Source: "openmpi"}, true, ""},
		{"MVAPICH2 over its PMI_", vars(mpich, mvapich2, commID), Launch{Rank: 3, Size: 6, LocalRank: 1, RootAddr: "10.0.0.1:4242", Source: "mvapich2"}, true, ""},
		{"srun --mpi=pmi2", vars(slurm, map[string]string{"PMI_RANK": "6", "PMI_SIZE": "7"}),
			Launch{Rank: 6, Size: 7, LocalRank: -1, RootAddr: "node07:16843", Source: "mpich"}, true, ""},
		{"mpiexec in a batch script", vars(slurmBatch, mpich, commID), Launch{Rank: 1, Size: 3, LocalRank: 1, RootAddr: "10.0.0.1:4242", Source: "mpich"}, true, ""},
		{"COMM_ID over MASTER_", map[string]string{"RANK": "0", "WORLD_SIZE": "1", "NCCL_COMM_ID": "a:1", "MASTER_ADDR": "b", "MASTER_PORT": "2"},
			Launch{Rank: 0, Size: 1, LocalRank: -1, RootAddr: "a:1", Source: "torchrun"}, true, ""},
		{"RINGO_COMM_ID over NCCL_", map[string]string{"RANK": "0", "WORLD_SIZE": "1", "NCCL_COMM_ID": "a:1", "RINGO_COMM_ID": "c:3"},
			Launch{Rank: 0, Size: 1, LocalRank: -1, RootAddr: "c:3", Source: "torchrun"}, true, ""},

		// Bad values, each named.
		{"rank without size", map[string]string{"RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "1"}, Launch{}, true, "RANK is set but WORLD_SIZE is not"},
		{"size without rank", map[string]string{"OMPI_COMM_WORLD_SIZE": "2"}, Launch{}, true, "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not"},
		{"MV2 rank without size", map[string]string{"MV2_COMM_WORLD_RANK": "0"}, Launch{}, true, "MV2_COMM_WORLD_RANK is set but MV2_COMM_WORLD_SIZE is not"},
		{"rank not a number", map[string]string{"RANK": "one", "WORLD_SIZE": "2"}, Launch{}, true, `RANK="one"`},
		{"rank too large", map[string]string{"RANK": "2", "WORLD_SIZE": "2"}, Launch{}, true, `RANK="2" is not a rank in [0, 2)`},
		{"size zero", map[string]string{"RINGO_RANK": "0", "RINGO_NRANKS": "0"}, Launch{}, true, `RINGO_NRANKS="0"`},
		{"PMI_SIZE too large", vars(mpich, map[string]string{"PMI_SIZE": "40000"}), Launch{}, true, `PMI_SIZE="40000" is not a world size in [1, 32768]`},
		{"SLURM_PROCID negative", vars(slurm, map[string]string{"SLURM_PROCID": "-1"}), Launch{}, true, `SLURM_PROCID="-1" is not a rank`},
		{"SLURM_NTASKS not a number", vars(slurm, map[string]string{"SLURM_NTASKS": "lots"}), Launch{}, true, `SLURM_NTASKS="lots"`},
		{"LOCAL_RANK not a number", vars(torchrun, master, map[string]string{"LOCAL_RANK": "x"}), Launch{}, true, `LOCAL_RANK="x" is not a local rank in [0, 8)`},
		{"OMPI local rank too large", vars(openmpi, commID, map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "4"}), Launch{}, true, `OMPI_COMM_WORLD_LOCAL_RANK="4"`},
		{"MV2 local rank negative", vars(mvapich2, commID, map[string]string{"MV2_COMM_WORLD_LOCAL_RANK": "-2"}), Launch{}, true, `MV2_COMM_WORLD_LOCAL_RANK="-2"`},
		{"MPI_LOCALRANKID too large", vars(mpich, commID, map[string]string{"MPI_LOCALRANKID": "3"}), Launch{}, true, `MPI_LOCALRANKID="3"`},
		{"SLURM_LOCALID bad", vars(slurm, map[string]string{"SLURM_LOCALID": "7"}), Launch{}, true, `SLURM_LOCALID="7"`},
		{"slurm nodelist unclosed", vars(slurm, map[string]string{"SLURM_STEP_NODELIST": "node[1-"}), Launch{}, true, `SLURM_STEP_NODELIST="node[1-": '[' not closed`},
		{"slurm nodelist backwards", vars(slurm, map[string]string{"SLURM_STEP_NODELIST": "", "SLURM_JOB_NODELIST": "n[3-1]"}), Launch{}, true, `SLURM_JOB_NODELIST="n[3-1]"`},
		{"slurm without a nodelist", vars(slurm, map[string]string{"SLURM_STEP_NODELIST": "", "SLURM_JOB_NODELIST": ""}), Launch{}, true, "set NCCL_COMM_ID (host:port), MASTER_ADDR and MASTER_PORT, or SLURM_JOB_NODELIST"},
		{"SLURM_JOB_ID not a number", vars(slurm, map[string]string{"SLURM_JOB_ID": "42_7"}), Launch{}, true, `SLURM_JOB_ID="42_7" is not a job ID`},
		{"SLURM_STEP_ID not a number", vars(slurm, map[string]string{"SLURM_STEP_ID": "batch"}), Launch{}, true, `SLURM_STEP_ID="batch" is not a step ID`},
		{"no root address", map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, Launch{}, true, "no root address"},
		{"mpich, no root address", mpich, Launch{}, true, "mpich set the rank and size but no root address"},
		{"address without port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "NCCL_COMM_ID": "10.0.0.1"}, Launch{}, true, "NCCL_COMM_ID"},
		{"address without host", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "RINGO_COMM_ID": ":4242"}, Launch{}, true, "RINGO_COMM_ID"},
		{"bad port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "http"}, Launch{}, true, `MASTER_PORT="http"`},
		{"port 0", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "0"}, Launch{}, true, "port 0"},
		{"MASTER_ADDR alone", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, Launch{}, true, "MASTER_PORT is not"},
		{"MASTER_ADDR alone in an srun step", vars(slurm, map[string]string{"MASTER_ADDR": "h"}), Launch{}, true, "MASTER_PORT is not"},
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
			assert.Equal(t, c.ok, ok, "ok")
			if c.err == "" {
				require.NoError(t, err)
				assert.Equal(t, c.want, l)
				return
			}
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

func TestExpandHostlist(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"node1", []string{"node1"}},
		{"node[01-03,07],gpu5", []string{"node01", "node02", "node03", "node07", "gpu5"}},
		{"n[8-10]", []string{"n8", "n9", "n10"}},
		{"n[08-10]", []string{"n08", "n09", "n10"}},
		{"r[1-2]n[8-9]", []string{"r1n8", "r1n9", "r2n8", "r2n9"}},
		{"a[1-2]-ib,b", []string{"a1-ib", "a2-ib", "b"}},
		{"x[3],y[5]", []string{"x3", "y5"}},
		{"node-a.example.com,10.0.0.7", []string{"node-a.example.com", "10.0.0.7"}},
	} {
		got, err := expandHostlist(c.in, maxRanks)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, c := range []struct{ in, err string }{
		{"", "empty host name"},
		{"a,,b", "empty host name at byte 2"},
		{"a,", "empty host name at byte 2"},
		{"n[1-", "'[' not closed"},
		{"n]1", "']' without '['"},
		{"n[[1]]", "nested '['"},
		{"n[]", `"" is not a number`},
		{"n[a-b]", `"a-b" is not a number`},
		{"n[1-2-3]", `"1-2-3" is not a number`},
		{"n[3-1]", `range "3-1" runs backwards`},
		{"n[1-40000]", "more than 32768 host names"},
		{"n[0-999999999]", "more than 32768 host names"},
		{"n[1-200]m[1-200]", "more than 32768 host names"},
		{"n[1-30000],m[1-3000]", "more than 32768 host names"},
		{"n[1234567890]", "is not a number"},
	} {
		_, err := expandHostlist(c.in, maxRanks)
		if assert.Error(t, err, c.in) {
			assert.Contains(t, err.Error(), c.err, c.in)
		}
	}
}

// FuzzExpandHostlist: expandHostlist never panics, keeps to its limit, and
// returns names without brackets or commas.
func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"node[01-03,07],gpu5", "r[1-2]n[8-9]", "n[1-", "a,,b", "n[0-999999999]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := expandHostlist(s, 1000)
		if err != nil {
			return
		}
		require.NotEmpty(t, hosts)
		require.LessOrEqual(t, len(hosts), 1000)
		for _, h := range hosts {
			require.NotContains(t, h, "[")
			require.NotContains(t, h, "]")
			require.NotContains(t, h, ",")
		}
	})
}

func TestJoinLaunch(t *testing.T) {
	clearLaunchEnv(t)
	addr := reservePort(t).String()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
		// Not synchronisation: a head start, so that ranks 2 and 1
		// usually dial before rank 0's root listens (the test passes in
		// any order; tcp's TestDialWaitsForListener covers the retry).
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

// TestJoinLaunchSecret: launched ranks agree on a secret through
// RINGO_SECRET; a rank with another RINGO_SECRET, or none (the secret
// derived from the address and size), is refused by the root.
func TestJoinLaunchSecret(t *testing.T) {
	clearLaunchEnv(t)
	addr := reservePort(t).String()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := func(rank int) Launch {
		return Launch{Rank: rank, Size: 2, LocalRank: -1, RootAddr: addr, Source: "ringo"}
	}
	t.Setenv("RINGO_SECRET", "job-42")
	id := newUniqueID(netip.MustParseAddrPort(addr), launchSecretFor(l(0)))
	type result struct {
		b   *Bootstrap
		err error
	}
	res0 := make(chan result, 1)
	go func() {
		b, _, err := JoinLaunch(ctx, l(0))
		res0 <- result{b, err}
	}()
	// Once rank 0's root runs, it has read RINGO_SECRET.
	require.Eventually(t, func() bool {
		rootsMu.Lock()
		defer rootsMu.Unlock()
		return roots[id] != nil
	}, 30*time.Second, 5*time.Millisecond, "rank 0 never started its root")

	for _, secret := range []string{"job-43", ""} {
		t.Setenv("RINGO_SECRET", secret)
		_, _, err := JoinLaunch(ctx, l(1))
		require.ErrorIs(t, err, errs.ErrInvalidArgument, "RINGO_SECRET=%q", secret)
		assert.Contains(t, err.Error(), "wrong secret", "RINGO_SECRET=%q", secret)
	}
	t.Setenv("RINGO_SECRET", "job-42")
	b1, id1, err := JoinLaunch(ctx, l(1))
	require.NoError(t, err)
	defer b1.Close()
	r0 := <-res0
	require.NoError(t, r0.err)
	defer r0.b.Close()
	assert.Equal(t, id, id1)
	checkRing(t, []*Bootstrap{r0.b, b1})
}
