package transport

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
)

// Launch is what a launcher told this process through its environment.
type Launch struct {
	Rank, Size int
	RootAddr   string // the bootstrap root's "host:port"
	Source     string // where Rank and Size came from: "ringo", "torchrun" or "mpirun"
}

// launchSources are the variable pairs giving rank and size, in order of
// precedence: explicit ringo settings, then torchrun's, then Open MPI's.
var launchSources = []struct{ source, rank, size string }{
	{"ringo", "RINGO_RANK", "RINGO_NRANKS"},
	{"torchrun", "RANK", "WORLD_SIZE"},
	{"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
}

// LaunchFromEnv reads the rank, the world size and the root address a
// launcher set in the environment:
//   - rank and size from RINGO_RANK/RINGO_NRANKS, else RANK/WORLD_SIZE
//     (torchrun), else OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun);
//   - the root address from RINGO_COMM_ID or NCCL_COMM_ID ("host:port"),
//     else MASTER_ADDR:MASTER_PORT.
//
// An empty variable counts as unset. ok is false (and err nil) when none of
// these variables is set; err (wrapping errs.ErrInvalidArgument and naming
// the variable) when they are set but incomplete or malformed.
func LaunchFromEnv() (l Launch, ok bool, err error) {
	bad := func(format string, a ...any) (Launch, bool, error) {
		return Launch{}, true, fmt.Errorf("launch: %s: %w", fmt.Sprintf(format, a...), errs.ErrInvalidArgument)
	}
	for _, s := range launchSources {
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
		l = Launch{Rank: rank, Size: size, Source: s.source}
		break
	}
	v, name, set := lookupEnvFirst("RINGO_COMM_ID", "NCCL_COMM_ID")
	if set {
		ok = true
		if err := checkRootAddr(v); err != nil {
			return bad("%s=%q: %v", name, v, err)
		}
		l.RootAddr = v
	} else {
		host, hok := lookupEnv("MASTER_ADDR")
		port, pok := lookupEnv("MASTER_PORT")
		switch {
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

// JoinLaunch joins the job described by l: rank 0 first starts the root at
// l.RootAddr (as StartRoot, but refusing an unspecified host, which the
// other ranks could not dial); every rank then joins the ID of that address,
// with Join's errors. On failure rank 0 stops its root.
//
// The secret of such a job is derived deterministically from RINGO_SECRET if
// set, else from (RootAddr, Size), so that every rank computes it alone.
// Anyone who knows those can too: it only keeps apart jobs that reuse a root
// address by accident (one after another, or two at once by mistake), not
// an adversary out. Use NewUniqueID when the ID can be handed around.
func JoinLaunch(ctx context.Context, l Launch) (*Bootstrap, UniqueID, error) {
	if l.Size < 1 || l.Size > maxRanks || l.Rank < 0 || l.Rank >= l.Size {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "rank %d of %d", l.Rank, l.Size)
	}
	if err := checkRootAddr(l.RootAddr); err != nil {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "root address %q: %v", l.RootAddr, err)
	}
	host, port, _ := splitHostPort(l.RootAddr)
	ip, err := resolveHost(ctx, host)
	if err != nil {
		return nil, UniqueID{}, &errs.Error{Op: "bootstrap launch", Rank: l.Rank, Peer: -1, Channel: -1, Step: -1, Err: err}
	}
	if ip.IsUnspecified() {
		return nil, UniqueID{}, errs.Invalid("bootstrap launch", l.Rank, "root address %q: the other ranks cannot dial an unspecified host", l.RootAddr)
	}
	root := netip.AddrPortFrom(ip, port)
	secret := launchSecretFor(l)
	id := newUniqueID(root, secret)
	if l.Rank == 0 {
		if id, err = startRoot(root.String(), ip, secret); err != nil {
			return nil, UniqueID{}, &errs.Error{Op: "bootstrap launch", Rank: 0, Peer: -1, Channel: -1, Step: -1, Err: err}
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
	host, port, err := splitHostPort(a)
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
