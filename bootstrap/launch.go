package bootstrap

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/ringo-ccl/ringo/internal/errs"
	"github.com/ringo-ccl/ringo/internal/tcp"
)

// Launch is what a launcher told this process through its environment.
type Launch struct {
	Rank, Size int
	// LocalRank is the rank among the ranks of this host, where the
	// launcher says (to choose a GPU by), else -1.
	LocalRank int
	RootAddr  string // the bootstrap root's "host:port"
	// Source is the launcher that set Rank and Size: "ringo", "torchrun",
	// "openmpi", "mvapich2", "mpich" (MPICH, Intel MPI, or srun --mpi=pmi2)
	// or "slurm".
	Source string
}

// launchSources are the variables giving rank, size and local rank, in
// order of precedence (see LaunchFromEnv).
var launchSources = []struct{ source, rank, size, local string }{
	{"ringo", "RINGO_RANK", "RINGO_NRANKS", ""},
	{"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
	{"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"mvapich2", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK"},
	{"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}, // only in an srun step: see inSlurmStep
}

// Slurm's root port, without NCCL_COMM_ID or MASTER_PORT (see
// LaunchFromEnv): slurmPortBase + slurmStepPorts·(job ID mod
// slurmJobPorts) + (step ID mod slurmStepPorts), in [12000, 32000): below
// Linux's ephemeral ports (32768 up), distinct for up to 20 steps of one
// job running at once and for jobs whose IDs are less than 1000 apart.
const (
	slurmPortBase  = 12000
	slurmJobPorts  = 1000
	slurmStepPorts = 20
)

// LaunchFromEnv reads the rank, the world size, the local rank and the root
// address a launcher set in the environment. An empty variable counts as
// unset.
//
// Rank and size come from the first of these sources that is set — explicit
// settings first, then launchers from the innermost to the outermost, since
// a launcher started by another sees both sets and its own is the one that
// counts (torchrun run by srun or mpirun, one per node: RANK is the
// process's rank, SLURM_PROCID or OMPI_COMM_WORLD_RANK the node's; mpirun
// in a Slurm allocation: its ranks inherit a SLURM_PROCID of its daemons):
//
//  1. RINGO_RANK, RINGO_NRANKS
//  2. torchrun: RANK, WORLD_SIZE (local rank LOCAL_RANK)
//  3. Open MPI: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (OMPI_COMM_WORLD_LOCAL_RANK)
//  4. MVAPICH2: MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_SIZE (MV2_COMM_WORLD_LOCAL_RANK)
//  5. MPICH, Intel MPI (and srun --mpi=pmi2): PMI_RANK, PMI_SIZE (MPI_LOCALRANKID)
//  6. Slurm: SLURM_PROCID, SLURM_NTASKS (SLURM_LOCALID), only in a job step
//     that srun started (SLURM_JOB_ID and SLURM_STEP_ID set): a batch
//     script has SLURM_PROCID=0 and the job's SLURM_NTASKS too, and is no
//     rank.
//
// The root address comes from RINGO_COMM_ID or NCCL_COMM_ID ("host:port"),
// else MASTER_ADDR and MASTER_PORT, else, in an srun step, the first host
// of SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), which is where srun
// places task 0, and the port 12000 + 20·(SLURM_JOB_ID mod 1000) +
// (SLURM_STEP_ID mod 20). Rank 0 listens there: a step whose rank 0 runs
// elsewhere (srun -m arbitrary) must set MASTER_ADDR.
//
// ok is false (and err nil) when none of these variables is set; err (wrapping
// errs.ErrInvalidArgument and naming the variable) when they are set but
// incomplete or malformed.
func LaunchFromEnv() (l Launch, ok bool, err error) {
	bad := func(format string, a ...any) (Launch, bool, error) {
		return Launch{}, true, fmt.Errorf("launch: %s: %w", fmt.Sprintf(format, a...), errs.ErrInvalidArgument)
	}
	step := inSlurmStep()
	for _, s := range launchSources {
		if s.source == "slurm" && !step {
			continue
		}
		r, rok := lookupEnv(s.rank)
		n, nok := lookupEnv(s.size)
		if !rok && !nok {
			continue
		}
		ok = true
		if !rok || !nok {
			set, unset := s.rank, s.size
			if !rok {
				set, unset = s.size, s.rank
			}
			return bad("%s is set but %s is not", set, unset)
		}
		size, err := strconv.Atoi(n)
		if err != nil || size < 1 || size > maxRanks {
			return bad("%s=%q is not a world size in [1, %d]", s.size, n, maxRanks)
		}
		rank, err := strconv.Atoi(r)
		if err != nil || rank < 0 || rank >= size {
			return bad("%s=%q is not a rank in [0, %d) (%s=%d)", s.rank, r, size, s.size, size)
		}
		l = Launch{Rank: rank, Size: size, LocalRank: -1, Source: s.source}
		if v, set := lookupEnv(s.local); set {
			local, err := strconv.Atoi(v)
			if err != nil || local < 0 || local >= size {
				return bad("%s=%q is not a local rank in [0, %d) (%s=%d)", s.local, v, size, s.size, size)
			}
			l.LocalRank = local
		}
		break
	}
	v, name, set := lookupEnvFirst("RINGO_COMM_ID", "NCCL_COMM_ID")
	host, hok := lookupEnv("MASTER_ADDR")
	port, pok := lookupEnv("MASTER_PORT")
	switch {
	case set:
		ok = true
		if err := checkRootAddr(v); err != nil {
			return bad("%s=%q: %v", name, v, err)
		}
		l.RootAddr = v
	case hok && !pok:
		return bad("MASTER_ADDR is set but MASTER_PORT is not")
	case pok && !hok:
		return bad("MASTER_PORT is set but MASTER_ADDR is not")
	case hok:
		ok = true
		l.RootAddr = net.JoinHostPort(host, port)
		if err := checkRootAddr(l.RootAddr); err != nil {
			return bad("MASTER_ADDR=%q MASTER_PORT=%q: %v", host, port, err)
		}
	case step && l.Source != "":
		if l.RootAddr, err = slurmRootAddr(); err != nil {
			return bad("%v", err)
		}
	}
	switch {
	case !ok:
		return Launch{}, false, nil
	case l.Source == "":
		return bad("a root address is set (%s) but no rank and size: set RINGO_RANK and RINGO_NRANKS", l.RootAddr)
	case l.RootAddr == "":
		return bad("%s set the rank and size but no root address is set: set RINGO_COMM_ID (or NCCL_COMM_ID) to host:port, or MASTER_ADDR and MASTER_PORT", l.Source)
	}
	return l, true, nil
}

// inSlurmStep reports whether this process is a task of a Slurm job step
// that srun started.
func inSlurmStep() bool {
	_, job := lookupEnv("SLURM_JOB_ID")
	_, _, step := lookupEnvFirst("SLURM_STEP_ID", "SLURM_STEPID")
	return job && step
}

// slurmRootAddr is the root address of an srun step: see LaunchFromEnv.
func slurmRootAddr() (string, error) {
	list, name, ok := lookupEnvFirst("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST")
	if !ok {
		return "", fmt.Errorf("no root address: set NCCL_COMM_ID (host:port), MASTER_ADDR and MASTER_PORT, or SLURM_JOB_NODELIST")
	}
	hosts, err := expandHostlist(list, maxRanks)
	if err != nil {
		return "", fmt.Errorf("%s=%q: %v", name, list, err)
	}
	job, _ := lookupEnv("SLURM_JOB_ID")
	j, err := strconv.ParseUint(job, 10, 64)
	if err != nil {
		return "", fmt.Errorf("SLURM_JOB_ID=%q is not a job ID", job)
	}
	step, stepName, _ := lookupEnvFirst("SLURM_STEP_ID", "SLURM_STEPID")
	s, err := strconv.ParseUint(step, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%s=%q is not a step ID", stepName, step)
	}
	port := slurmPortBase + slurmStepPorts*(j%slurmJobPorts) + s%slurmStepPorts
	return net.JoinHostPort(hosts[0], strconv.FormatUint(port, 10)), nil
}

// JoinLaunch joins the job described by l: rank 0 first starts the root at
// l.RootAddr (as StartRoot, but refusing an unspecified host, which the
// other ranks could not dial); every rank then joins the ID of that address,
// with Join's errors. On failure rank 0 stops its root.
//
// The ranks of such a job must agree on its secret without talking, so each
// derives it: from RINGO_SECRET if set (any string, the same in every rank;
// the launcher passes the environment on), else from (RootAddr, Size).
// The derived secret keeps apart jobs that reuse a root address by accident
// (one after another, or two at once by mistake), not an adversary: anyone
// who can reach the port and knows the address and the size can compute it
// and join. Set RINGO_SECRET to something only the job knows, or use
// NewUniqueID when the ID can be handed around, to keep others out.
func JoinLaunch(ctx context.Context, l Launch) (*Bootstrap, UniqueID, error) {
	if l.Size < 1 || l.Size > maxRanks || l.Rank < 0 || l.Rank >= l.Size {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "rank %d of %d", l.Rank, l.Size)
	}
	if err := checkRootAddr(l.RootAddr); err != nil {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "root address %q: %v", l.RootAddr, err)
	}
	host, port, _ := tcp.SplitHostPort(l.RootAddr)
	ip, err := tcp.ResolveHost(ctx, host)
	if err != nil {
		return nil, UniqueID{}, errs.At("bootstrap launch", l.Rank, err)
	}
	if ip.IsUnspecified() {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "root address %q: the other ranks cannot dial an unspecified host", l.RootAddr)
	}
	root := netip.AddrPortFrom(ip, port)
	secret := launchSecretFor(l)
	id := newUniqueID(root, secret)
	if l.Rank == 0 {
		if id, err = startRoot(root.String(), ip, secret); err != nil {
			return nil, UniqueID{}, errs.At("bootstrap launch", 0, err)
		}
	}
	b, err := Join(ctx, id, l.Size, l.Rank)
	if err != nil {
		if l.Rank == 0 {
			StopRoot(id)
		}
		return nil, UniqueID{}, err
	}
	return b, id, nil
}

// launchSecretFor derives the secret of the launched job l (see JoinLaunch).
func launchSecretFor(l Launch) [32]byte {
	if s, ok := lookupEnv("RINGO_SECRET"); ok {
		return sha256.Sum256([]byte("ringo secret\x00" + s))
	}
	return sha256.Sum256(fmt.Appendf(nil, "ringo launch\x00%s\x00%d", l.RootAddr, l.Size))
}

// checkRootAddr checks that a is "host:port" with a host and a port in
// [1, 65535].
func checkRootAddr(a string) error {
	host, port, err := tcp.SplitHostPort(a)
	switch {
	case err != nil:
		return err
	case host == "":
		return fmt.Errorf("no host in %q", a)
	case port == 0:
		return fmt.Errorf("port 0 in %q", a)
	}
	return nil
}

// lookupEnvFirst returns the value and name of the first of names that
// lookupEnv finds.
func lookupEnvFirst(names ...string) (value, name string, ok bool) {
	for _, n := range names {
		if v, ok := lookupEnv(n); ok {
			return v, n, true
		}
	}
	return "", "", false
}

// lookupEnv returns the trimmed value of name and whether it is set and not
// empty.
func lookupEnv(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}
